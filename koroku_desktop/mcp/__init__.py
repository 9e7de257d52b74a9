"""The MCP client adapter (stdio and streamable HTTP). The only importer of the `mcp` SDK.

Only `config`, `naming`, `state`, `manager` (with its mixins `extras` and `sign_in`),
`sdk_log`, and the SDK-free `prompt_commands` and `uri_template` (the front ends' slash
commands and resource templates) load at start-up; the SDK itself is imported in the
background when the servers start (with `resources`, `subscriptions`...), and `oauth` (the
sign-in, over the SDK's OAuth client) when a sign-in starts.
"""

from koroku_desktop.mcp.config import (
    McpConfig,
    McpConfigError,
    ServerConfig,
    parse_server,
    read_config,
    remove_server,
    save_server,
)
from koroku_desktop.mcp.extras import McpPromptError
from koroku_desktop.mcp.manager import McpManager
from koroku_desktop.mcp.state import (
    McpElicitAnswer,
    McpElicitation,
    McpProgress,
    McpPromptInfo,
    McpResourceInfo,
    McpTiming,
    McpToolInfo,
    SecretStore,
    ServerStatus,
    SignInFailed,
    SignInNeeded,
    SignInTimeout,
    UrlOpener,
)

__all__ = [
    "McpConfig",
    "McpConfigError",
    "McpElicitAnswer",
    "McpElicitation",
    "McpManager",
    "McpProgress",
    "McpPromptError",
    "McpPromptInfo",
    "McpResourceInfo",
    "McpTiming",
    "McpToolInfo",
    "SecretStore",
    "ServerConfig",
    "ServerStatus",
    "SignInFailed",
    "SignInNeeded",
    "SignInTimeout",
    "UrlOpener",
    "parse_server",
    "read_config",
    "remove_server",
    "save_server",
]

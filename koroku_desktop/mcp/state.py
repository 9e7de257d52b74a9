"""What the rest of Koroku sees of MCP servers: their tools and their status (no SDK types)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ServerState = Literal["disabled", "invalid", "starting", "slow", "ready", "failed", "stopped"]
"""`slow`: still starting after a front end stopped waiting (its reason in `last_error`)."""


@dataclass(frozen=True)
class McpToolInfo:
    """One tool a server offers, as listed by `tools/list`."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)
    read_only: bool = False
    """The server marked it `readOnlyHint` (it promises to change nothing)."""


@dataclass(frozen=True)
class ServerStatus:
    """One configured server as `koroku mcp list` and the settings page show it."""

    name: str
    transport: str
    enabled: bool
    state: ServerState
    tools: tuple[McpToolInfo, ...] = ()
    last_error: str | None = None
    restarts: int = 0
    target: str = ""
    """The command line (stdio) or URL (HTTP), for display."""
    model_names: dict[str, str] = field(default_factory=dict)
    """Tool name on the server -> the function name the model sees."""


@dataclass(frozen=True)
class McpTiming:
    """Timeouts and back-off of the client, in seconds (tests shorten them)."""

    start_timeout: float = 20.0
    call_timeout: float = 120.0
    health_interval: float = 15.0
    health_timeout: float = 10.0
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    stop_timeout: float = 8.0
    slow_after: float = 3.0
    """A server still starting after this long is shown as slow, with what it waits for."""

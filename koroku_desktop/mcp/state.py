"""What the rest of Koroku sees of MCP servers: their tools and their status (no SDK types)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from koroku_desktop.domain.errors import KorokuError

SignInState = Literal["", "signed in", "sign in needed"]
"""An HTTP server's OAuth state: "" until the server asks for a token."""

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
    destructive: bool = False
    """The server marked it `destructiveHint: true` (it may delete or overwrite things)."""
    open_world: bool = False
    """The server marked it `openWorldHint: true` (it reaches things outside, e.g. the web)."""
    task_support: str = "forbidden"
    """`execution.taskSupport`: forbidden, optional or required (2025-11-25 tasks)."""

    def hints(self) -> list[str]:
        """The server's annotations as short phrases for an approval card."""
        out = []
        if self.read_only:
            out.append("marked read-only")
        elif self.destructive:
            out.append("marked destructive: may delete or overwrite data")
        if self.open_world:
            out.append("marked open-world: reaches outside this computer")
        return out


@dataclass(frozen=True)
class McpResourceInfo:
    """One resource (or, with `template`, a URI template) a server lists."""

    server: str
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None
    template: bool = False


@dataclass(frozen=True)
class McpPromptInfo:
    """One prompt a server lists: a slash command `/server:name` in `koroku chat`."""

    server: str
    name: str
    description: str = ""
    arguments: tuple[tuple[str, bool, str], ...] = ()
    """(name, required, description) of each argument, in order."""


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
    protocol: str = ""
    """The MCP revision negotiated with the server (e.g. 2026-07-28), once connected."""
    resources: tuple[McpResourceInfo, ...] = ()
    """Its resources and URI templates, as last listed."""
    prompts: tuple[McpPromptInfo, ...] = ()
    """Its prompts, as last listed."""
    sign_in: SignInState = ""
    """OAuth (HTTP servers): signed in, sign in needed, or "" when the server asked for none."""


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
    elicit_timeout: float = 300.0
    """A server's question left unanswered this long is declined."""
    slow_after: float = 3.0
    """A server still starting after this long is shown as slow, with what it waits for."""


@dataclass(frozen=True)
class McpProgress:
    """A running MCP call's progress, as its server reported it (for the card and status)."""

    function: str
    """The function name the model called."""
    server: str
    tool: str
    progress: float | None = None
    total: float | None = None
    message: str | None = None
    task_status: str | None = None
    """For a task: working, input_required, completed, failed or cancelled."""

    def line(self) -> str:
        """`server tool: 40% — Analyzing content...` for the terminal."""
        return f"{self.server} {self.tool}: {self.detail()}"

    def detail(self) -> str:
        """`40% — Analyzing content...` (or `running`) for a card."""
        bits = []
        if self.progress is not None and self.total:
            bits.append(f"{100 * self.progress / self.total:.0f}%")
        elif self.progress is not None:
            bits.append(f"{self.progress:g}")
        if self.task_status and self.task_status != "working":
            bits.append(self.task_status.replace("_", " "))
        if self.message:
            bits.append(self.message)
        return " — ".join(bits) if bits else "running"


@dataclass(frozen=True)
class McpElicitation:
    """A server's request for input: a form (`schema`) or a URL to open (`url`)."""

    server: str
    message: str
    schema: dict[str, Any] = field(default_factory=dict)
    url: str | None = None


@dataclass(frozen=True)
class McpElicitAnswer:
    """The person's answer: accept (with the form's `content`), decline or cancel."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


Elicitor = Callable[[McpElicitation], Awaitable[McpElicitAnswer]]
"""A front end's way of asking the person (a card, a terminal prompt)."""


class SecretStore(Protocol):
    """Where OAuth tokens are kept: the OS keyring (app/ provides it; the key names a server).

    Calls may block (D-Bus, a keychain prompt): the client runs them off the event loop.
    """

    def usable(self) -> bool:
        """Whether anything can be stored (an OS keyring exists)."""
        ...

    def get(self, key: str) -> str | None:
        """The stored value, or None."""
        ...

    def set(self, key: str, value: str) -> None:
        """Store `value`; raises when there is no keyring (a token never goes to a file)."""
        ...

    def delete(self, key: str) -> None:
        """Forget `key` (no error when it is not there)."""
        ...


SIGN_IN_TIMEOUT_S = 300.0
"""How long a sign-in waits for the browser to come back to Koroku."""

UrlOpener = Callable[[str], Awaitable[None] | None]
"""Opens the authorization page in the person's browser (Qt's QDesktopServices in the app,
`webbrowser` in the terminal; a test's HTTP client that follows the redirects)."""


class SignInNeeded(KorokuError, RuntimeError):
    """The server refused its token and no refresh helped: the person must sign in."""


class SignInFailed(KorokuError, RuntimeError):
    """A sign-in did not finish (timeout, refusal, a wrong issuer, no keyring...)."""


class SignInTimeout(SignInFailed):
    """The browser never came back to the loopback redirect."""

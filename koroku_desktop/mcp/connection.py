"""ServerConnection: one MCP server kept connected by a supervising task.

The task enters the SDK's `Client` (anyio cancel scopes must be entered and left by the same
task), lists the tools, then waits: for a stop, or for a health check (a fresh `tools/list`)
that finds the server gone. A server that fails or crashes is started again after a back-off
that doubles with every consecutive failure. Calls run in the caller's task, so cancelling a
turn cancels its call; a call that finds the connection closed wakes the supervisor at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolResult,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    PromptListChangedNotification,
    ReadResourceResult,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    ToolListChangedNotification,
)

from koroku_desktop import __version__
from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.mcp import oauth, sdk_log
from koroku_desktop.mcp.config import ServerConfig
from koroku_desktop.mcp.oauth_store import KeyringTokenStorage
from koroku_desktop.mcp.prompts import list_prompts
from koroku_desktop.mcp.resources import list_resources
from koroku_desktop.mcp.server_log import ServerLog
from koroku_desktop.mcp.state import (
    Elicitor,
    McpPromptInfo,
    McpResourceInfo,
    McpTiming,
    McpToolInfo,
    SecretStore,
    ServerState,
    SignInState,
)
from koroku_desktop.mcp.subscriptions import Subscriptions
from koroku_desktop.mcp.tasks import call_as_task, can_call_tasks
from koroku_desktop.mcp.tool_list import list_tools
from koroku_desktop.mcp.transport import answer_elicitation, ask_for_log, open_transport

log = logging.getLogger(__name__)

_T = TypeVar("_T")


SIGN_IN_HELP = (
    "sign in needed: the server wants a sign-in, no token yet or its token refused (Settings → "
    "MCP servers → Sign in, or `koroku mcp login {name}`)"
)


class McpUnavailable(KorokuError, RuntimeError):
    """The server is not connected (starting, failed or stopped)."""


def describe_error(exc: BaseException) -> str:
    """One line for a person: the innermost error of an exception group, named."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    return text if isinstance(exc, MCPError) else f"{type(exc).__name__}: {text}"


class ServerConnection(ServerLog):
    """Keeps one configured server connected; `call` runs a tool on it."""

    def __init__(
        self,
        config: ServerConfig,
        timing: McpTiming,
        log_dir: Path | None,
        on_change: Callable[[ServerConnection, str | None], None],
    ) -> None:
        self.config = config
        self.timing = timing
        self.state: ServerState = "starting"
        self.tools: tuple[McpToolInfo, ...] = ()
        self.resources: tuple[McpResourceInfo, ...] = ()
        self.prompts: tuple[McpPromptInfo, ...] = ()
        self.last_error: str | None = None
        self.restarts = 0
        self._log_dir = log_dir
        self._on_change = on_change
        self._client: Client | None = None
        self._scope: anyio.CancelScope | None = None
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._errlog: TextIO | None = None
        self._errlog_start = 0
        self.stage = "starting"
        """What the current attempt is doing (launching, initializing, listing tools...)."""
        self.attempt_started = time.monotonic()
        self.slow = False
        """A front end stopped waiting for this attempt before it got ready."""
        self._sdk_error = ""
        self.protocol = ""
        self.tasks_ok = False
        self.secrets: SecretStore | None = None
        """Where OAuth tokens are kept (None: HTTP servers get no OAuth)."""
        self.sign_in: SignInState = ""
        self._tokens: KeyringTokenStorage | None = None
        self._refused = False
        """This attempt stopped because the server wants a sign-in."""
        self.elicitor: Elicitor | None = None
        """Asks the person for a server's elicitation (None: the capability is not declared)."""
        self.subscriptions = Subscriptions(config.name)
        sdk_log.install(log_dir)
        self.ready = asyncio.Event()
        """Set once the first attempt has ended, connected or not (for `wait_settled`)."""

    @property
    def name(self) -> str:
        """The server's name in mcp.json."""
        return self.config.name

    def start(self) -> None:
        """Start supervising in the background (needs a running loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcp:{self.name}")

    async def stop(self) -> None:
        """Disconnect and end the server (a stdio process is terminated and reaped)."""
        self._stopping = True
        self._wake.set()
        if self.state != "ready" and self._scope is not None:
            self._scope.cancel()
        task = self._task
        if task is not None and not task.done():
            done, _ = await asyncio.wait([task], timeout=self.timing.stop_timeout)
            if not done:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._set("stopped", None)
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    def _set(self, state: ServerState, notice: str | None) -> None:
        self.state = state
        self._on_change(self, notice)

    async def call(
        self,
        tool: str,
        args: dict[str, Any],
        limit_s: float,
        on_progress: Callable[[float | None, float | None, str | None, str | None], None],
    ) -> CallToolResult:
        """Run `tool` (as a task when it requires one), reporting progress; raises
        McpUnavailable, TimeoutError, or the SDK's error. Cancelling cancels the call."""
        client = self._client
        if client is None or self.state != "ready":
            detail = f": {self.last_error}" if self.last_error else ""
            raise McpUnavailable(f"MCP server {self.name!r} is {self.state}{detail}")
        info = next((t for t in self.tools if t.name == tool), None)

        async def report(progress: float, total: float | None, message: str | None) -> None:
            on_progress(progress, total, message, None)

        def status(state: str, message: str | None) -> None:
            on_progress(None, None, message, state)

        token = sdk_log.current_sink.set(self)
        try:
            async with asyncio.timeout(limit_s):
                if info is not None and info.task_support == "required":
                    return await call_as_task(client, tool, args, status)
                return await client.call_tool(tool, args, progress_callback=report)
        except MCPError:
            self._wake.set()  # maybe the connection is gone: check now
            raise
        finally:
            sdk_log.current_sink.reset(token)

    # -- supervision -------------------------------------------------------------------

    async def _supervise(self) -> None:
        sdk_log.current_sink.set(self)  # this task's context: the SDK's tasks inherit it
        failures = 0
        while not self._stopping:
            self.attempt_started, self.slow, self._sdk_error = time.monotonic(), False, ""
            self.stage = "launching" if self.config.transport == "stdio" else "connecting"
            if self.last_error is None:  # a retry stays "failed", with why, until it is ready
                self._set("starting", None)
            error, was_ready = await self._run_once()
            self.ready.set()
            if self._stopping:
                break
            failures = 1 if was_ready else failures + 1
            repeated = not was_ready and error == self.last_error
            self.last_error = error
            self.restarts += 1
            verb = "stopped" if was_ready else "failed to start"
            notice = None if repeated else f"MCP server {self.name!r} {verb}: {error}"
            if self._refused:  # the status bar's line, once
                notice = None if repeated else f"{self.name}: sign in needed"
            self._set("failed", notice)  # the same failure again is not news
            delay = min(self.timing.backoff_max, self.timing.backoff_base * 2 ** (failures - 1))
            with anyio.move_on_after(delay):
                await self._wake.wait()
            self._wake.clear()

    async def _list_resources(self, client: Client) -> tuple[McpResourceInfo, ...]:
        """Its resources and templates; a listing that fails leaves the tools usable."""
        return await self._listed(
            "resources/list", list_resources(client, self.name), self.resources
        )

    async def _list_prompts(self, client: Client) -> tuple[McpPromptInfo, ...]:
        """Its prompts; a listing that fails leaves the tools usable."""
        return await self._listed("prompts/list", list_prompts(client, self.name), self.prompts)

    async def _listed(self, what: str, listing: Awaitable[_T], last: _T) -> _T:
        """`listing`'s result, or `last` (logged) when it fails or takes too long."""
        try:
            with anyio.fail_after(self.timing.health_timeout):
                return await listing
        except Exception as exc:  # noqa: BLE001 — a failed listing leaves the tools usable
            line = f"{what}: {describe_error(exc)}"
            self.write_log(sdk_log.format_lines("koroku", "WARNING", line), logging.INFO)
            return last

    @property
    def sign_in_refused(self) -> bool:
        """The server refused the token in this attempt (a call failing now failed for it)."""
        return self._refused

    def client(self) -> Client:
        """The connected client; raises McpUnavailable when not ready."""
        if self._client is None or self.state != "ready":
            raise McpUnavailable(f"MCP server {self.name!r} is {self.state}")
        return self._client

    async def _elicit(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        """A server asks the person something; no answer within the limit declines."""
        del context  # the request's own context is not needed to ask
        return await answer_elicitation(
            self.elicitor, self.name, params, self.timing.elicit_timeout
        )

    async def _on_message(self, message: Any) -> None:
        """A list-changed or resource-updated notification: list again now."""
        if isinstance(message, ResourceUpdatedNotification):
            self.subscriptions.updated(str(message.params.uri))
            self._wake.set()
        elif isinstance(
            message,
            ResourceListChangedNotification
            | ToolListChangedNotification
            | PromptListChangedNotification,
        ):
            self._wake.set()

    async def read_resource(self, uri: str, limit_s: float) -> ReadResourceResult:
        """`resources/read` of `uri`; raises McpUnavailable, TimeoutError or the SDK's error."""
        client = self._client
        if client is None or self.state != "ready":
            raise McpUnavailable(f"MCP server {self.name!r} is {self.state}")
        token = sdk_log.current_sink.set(self)
        try:
            async with asyncio.timeout(limit_s):
                return await client.read_resource(uri, cache_mode="refresh")
        finally:
            sdk_log.current_sink.reset(token)

    def why_not_ready(self) -> str:
        """For a slow start: what this attempt is waiting for, and what went wrong so far."""
        waited = time.monotonic() - self.attempt_started
        parts = [f"not ready after {waited:.0f} s ({self.stage})"]
        if self._sdk_error:
            parts.append(f"last error: {self._sdk_error}")
        tail = self._stderr_tail()
        if tail:
            parts.append(f"stderr: {tail}")
        return "; ".join(parts)

    async def _open(self, stack: AsyncExitStack) -> Client:
        stdio = self.config.transport == "stdio"
        auth = None if stdio else await self._auth()
        transport = await open_transport(
            self.config, stack, self._stderr() if stdio else None, auth
        )
        self.stage = "initializing"
        client = Client(
            transport,
            client_info=Implementation(name="koroku", version=__version__),
            logging_callback=self._server_log,
            log_level="info",
            message_handler=self._on_message,
            elicitation_callback=self._elicit if self.elicitor is not None else None,
        )
        await stack.enter_async_context(client)
        await ask_for_log(client)
        return client

    async def _auth(self) -> OAuthClientProvider | None:
        """OAuth for an HTTP server without a static Authorization header (None: no keyring
        seam, or the header is given)."""
        if self.secrets is None or oauth.has_static_auth(self.config):
            return None

        def needed() -> None:
            self.sign_in, self._refused = "sign in needed", True

        provider, self._tokens = await oauth.connection_auth(self.config, self.secrets, needed)
        return provider

    async def _run_once(self) -> tuple[str, bool]:
        """One connection, from start to its end; (why it ended, whether it got ready)."""
        loop = asyncio.get_running_loop()
        self._refused = False
        timed_out = False
        was_ready = False
        error = "stopped"
        with anyio.CancelScope() as scope:
            self._scope = scope

            def on_deadline() -> None:
                nonlocal timed_out
                timed_out = True
                scope.cancel()

            deadline = loop.call_later(self.timing.start_timeout, on_deadline)
            try:
                async with AsyncExitStack() as stack:
                    client = await self._open(stack)
                    self.protocol = client.protocol_version
                    self.tasks_ok = can_call_tasks(client.server_capabilities)
                    self.stage = "listing tools"
                    tools = await list_tools(client, self.name, refresh=False)
                    self.resources = await self._list_resources(client)
                    self.prompts = await self._list_prompts(client)
                    deadline.cancel()
                    self._client, self.tools, self.last_error = client, tools, None
                    stored = self._tokens is not None and self._tokens.stored_tokens
                    self.sign_in = "signed in" if stored else ""
                    was_ready = True
                    self.ready.set()
                    self._set("ready", None)
                    async with anyio.create_task_group() as group:
                        group.start_soon(self.subscriptions.listen, client, self._wake)
                        error = await self._serve(client)
                        group.cancel_scope.cancel()
                    self._client = None
            except Exception as exc:  # noqa: BLE001 — a server failing in any way is its status, never the app's crash
                error = describe_error(exc)
                if self._refused:
                    error = SIGN_IN_HELP.format(name=self.name)
            finally:
                deadline.cancel()
                self._client = None
                self._scope = None
        if timed_out:
            error = f"did not answer within {self.timing.start_timeout:g} s ({self.stage})"
            if self._sdk_error:
                error += f"; last error: {self._sdk_error}"
        tail = "" if was_ready else self._stderr_tail()  # a live server's log is noise
        return (f"{error} (stderr: {tail})" if tail else error), was_ready

    async def _serve(self, client: Client) -> str:
        """Wait while connected; check health now and then; say why the connection ended."""
        while True:
            with anyio.move_on_after(self.timing.health_interval):
                await self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return "stopped"
            try:
                with anyio.fail_after(self.timing.health_timeout):
                    tools = await list_tools(client, self.name, refresh=True)
            except Exception as exc:  # noqa: BLE001 — any failure of the health check means the server stopped answering
                return f"stopped answering: {describe_error(exc)}"
            resources = await self._list_resources(client)
            prompts = await self._list_prompts(client)
            if (tools, resources, prompts) != (self.tools, self.resources, self.prompts):
                self.tools, self.resources, self.prompts = tools, resources, prompts
                self._set("ready", None)

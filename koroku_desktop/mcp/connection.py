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
import re
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Implementation, Tool

from koroku_desktop import __version__
from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.mcp.config import ServerConfig
from koroku_desktop.mcp.state import McpTiming, McpToolInfo, ServerState

log = logging.getLogger(__name__)

_LIST_PAGES = 50  # a server that paginates forever cannot hang the listing


class McpUnavailable(KorokuError, RuntimeError):
    """The server is not connected (starting, failed or stopped)."""


def describe_error(exc: BaseException) -> str:
    """One line for a person: the innermost error of an exception group, named."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    return text if isinstance(exc, MCPError) else f"{type(exc).__name__}: {text}"


def _tool_info(server: str, tool: Tool) -> McpToolInfo:
    hints = tool.annotations
    return McpToolInfo(
        server=server,
        name=tool.name,
        description=tool.description or tool.title or tool.name,
        input_schema=dict(tool.input_schema or {}),
        read_only=bool(hints is not None and hints.read_only_hint),
    )


async def _list_tools(client: Client, server: str, refresh: bool) -> tuple[McpToolInfo, ...]:
    tools: list[McpToolInfo] = []
    cursor: str | None = None
    for _ in range(_LIST_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="refresh" if refresh else "use")
        tools.extend(_tool_info(server, t) for t in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(tools)


class ServerConnection:
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

    async def call(self, tool: str, args: dict[str, Any], limit_s: float) -> CallToolResult:
        """Run `tool`; raises McpUnavailable, TimeoutError, or the SDK's error."""
        client = self._client
        if client is None or self.state != "ready":
            detail = f": {self.last_error}" if self.last_error else ""
            raise McpUnavailable(f"MCP server {self.name!r} is {self.state}{detail}")
        try:
            async with asyncio.timeout(limit_s):
                return await client.call_tool(tool, args)
        except MCPError:
            self._wake.set()  # maybe the connection is gone: check now
            raise

    # -- supervision -------------------------------------------------------------------

    async def _supervise(self) -> None:
        failures = 0
        while not self._stopping:
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
            self._set("failed", notice)  # the same failure again is not news
            delay = min(self.timing.backoff_max, self.timing.backoff_base * 2 ** (failures - 1))
            with anyio.move_on_after(delay):
                await self._wake.wait()
            self._wake.clear()

    def _stderr(self) -> TextIO | None:
        if self._log_dir is None:
            return None
        if self._errlog is None:
            self._log_dir.mkdir(parents=True, exist_ok=True)
            safe = re.sub(r"[^A-Za-z0-9_.-]", "_", self.name)
            self._errlog = open(self._log_dir / f"mcp-{safe}.log", "a", encoding="utf-8")  # noqa: SIM115
        self._errlog.flush()
        self._errlog_start = self._errlog.tell()
        return self._errlog

    def _stderr_tail(self) -> str:
        """The last line the server wrote to stderr during this attempt, if any."""
        if self._errlog is None:
            return ""
        try:
            with open(self._errlog.name, encoding="utf-8", errors="replace") as fh:
                fh.seek(self._errlog_start)
                lines = [ln.strip() for ln in fh.read()[-4000:].splitlines() if ln.strip()]
        except OSError:
            return ""
        return lines[-1] if lines else ""

    async def _open(self, stack: AsyncExitStack) -> Client:
        cfg = self.config
        info = Implementation(name="koroku", version=__version__)
        if cfg.transport == "stdio":
            params = StdioServerParameters(
                command=cfg.command, args=list(cfg.args), env=dict(cfg.env)
            )
            errlog = self._stderr()
            transport = stdio_client(params) if errlog is None else stdio_client(params, errlog)
        else:
            http = await stack.enter_async_context(create_mcp_http_client(dict(cfg.headers)))
            transport = streamable_http_client(cfg.url, http_client=http)
        return await stack.enter_async_context(Client(transport, client_info=info))

    async def _run_once(self) -> tuple[str, bool]:
        """One connection, from start to its end; (why it ended, whether it got ready)."""
        loop = asyncio.get_running_loop()
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
                    tools = await _list_tools(client, self.name, refresh=False)
                    deadline.cancel()
                    self._client, self.tools, self.last_error = client, tools, None
                    was_ready = True
                    self.ready.set()
                    self._set("ready", None)
                    error = await self._serve(client)
                    self._client = None
            except Exception as exc:  # noqa: BLE001 — a server failing in any way is its status, never the app's crash
                error = describe_error(exc)
            finally:
                deadline.cancel()
                self._client = None
                self._scope = None
        if timed_out:
            error = f"did not answer within {self.timing.start_timeout:g} s"
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
                    tools = await _list_tools(client, self.name, refresh=True)
            except Exception as exc:  # noqa: BLE001 — any failure of the health check means the server stopped answering
                return f"stopped answering: {describe_error(exc)}"
            if tools != self.tools:
                self.tools = tools
                self._set("ready", None)

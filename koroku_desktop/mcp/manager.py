"""McpManager: every configured MCP server, kept in step with mcp.json, offered as tools.

It is a tool source for the registry (`specs`, `owns`, `call`, ...) using only domain types,
so the agent never sees the SDK. The SDK is imported in a worker thread when the servers
start, after the window is up; until a server is ready its tools are simply not offered.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from koroku_desktop.domain.model_io import ToolSpec
from koroku_desktop.domain.parts import InlineDataPart
from koroku_desktop.mcp import config as mcp_config
from koroku_desktop.mcp import resource_tool
from koroku_desktop.mcp.config import McpConfig, McpConfigError, ServerConfig
from koroku_desktop.mcp.extras import McpExtras
from koroku_desktop.mcp.naming import assign_names
from koroku_desktop.mcp.sign_in import McpSignIn
from koroku_desktop.mcp.state import (
    Elicitor,
    McpProgress,
    McpTiming,
    McpToolInfo,
    SecretStore,
    ServerStatus,
)
from koroku_desktop.mcp.statuses import server_statuses

if TYPE_CHECKING:
    from koroku_desktop.mcp.connection import ServerConnection

log = logging.getLogger(__name__)

Notice = Callable[[str], object]


def _schema(info: McpToolInfo) -> dict[str, Any]:
    """The tool's JSON schema as Gemini's `parametersJsonSchema` takes it."""
    schema = {k: v for k, v in info.input_schema.items() if k != "$schema"}
    schema["type"] = "object"
    schema.setdefault("properties", {})
    return schema


@dataclass(eq=False)
class McpManager(McpExtras, McpSignIn):
    """Starts, restarts, reconfigures and stops the servers in mcp.json; runs their tools."""

    config_path: Path
    log_dir: Path | None = None
    timing: McpTiming = field(default_factory=McpTiming)
    secrets: SecretStore | None = None
    """Where HTTP servers' OAuth tokens are kept (the OS keyring; None: no OAuth)."""
    notices: list[Notice] = field(init=False, default_factory=list)
    """Called with one line whenever a server fails, crashes or the config is bad."""
    on_status_changed: list[Callable[[], None]] = field(init=False, default_factory=list)
    elicitor: Elicitor | None = field(init=False, default=None)
    """How a front end asks the person when a server elicits (set before `start`; None
    declares no elicitation, so servers hide what needs it)."""
    on_progress: list[Callable[[McpProgress], None]] = field(init=False, default_factory=list)
    """Called with every progress report and task status of a running call."""
    on_resource_updated: list[Callable[[str, str], None]] = field(init=False, default_factory=list)
    """Called with (server, uri) when a subscribed resource changed."""
    _config: McpConfig = field(init=False, default_factory=McpConfig)
    _config_error: str | None = field(init=False, default=None)
    _stamp: tuple[int, int] | None = field(init=False, default=None)
    _connections: dict[str, ServerConnection] = field(init=False, default_factory=dict)
    _names: dict[str, tuple[str, str]] = field(init=False, default_factory=dict)
    reserved_names: tuple[str, ...] = field(init=False, default=())
    """Koroku's own tool names, which MCP tools avoid (set by `specs`, or by a caller)."""
    _started: bool = field(init=False, default=False)
    _apply_lock: asyncio.Lock | None = field(init=False, default=None)
    _pending: set[asyncio.Task[None]] = field(init=False, default_factory=set)

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Read mcp.json and start every enabled server in the background."""
        self._started = True
        self._read()
        await self._apply()

    async def stop(self) -> None:
        """Stop every server (stdio processes are terminated and reaped)."""
        self._started = False
        # Let edits being applied finish: they may be stopping a server (bounded waits).
        await asyncio.gather(*self._pending, return_exceptions=True)
        connections = list(self._connections.values())
        self._connections.clear()
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)
        self._changed()

    async def wait_settled(self, limit_s: float) -> None:
        """Wait until every server has connected or failed once, at most `limit_s` s.

        A server still starting then is marked slow, and a notice says what it waits for
        (its tools are offered as soon as it gets ready).
        """
        await self.refresh()
        conns = list(self._connections.values())
        waits = [asyncio.ensure_future(c.ready.wait()) for c in conns]
        if waits:
            _, pending = await asyncio.wait(waits, timeout=limit_s)
            for task in pending:
                task.cancel()
        for conn in conns:
            if not conn.ready.is_set() and conn.state == "starting":
                conn.slow = True
                self._notify(f"MCP server {conn.name!r} is slow to start: {conn.why_not_ready()}")
        if any(c.slow for c in conns):
            self._changed()

    def _read(self) -> bool:
        """Re-read mcp.json if its mtime or size changed; return whether it did."""
        try:
            st = self.config_path.stat()
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp == self._stamp and self._stamp is not None:
            return False
        if stamp is None and self._stamp is None and not self._config.servers:
            return False
        self._stamp = stamp
        try:
            config = mcp_config.read_config(self.config_path)
        except McpConfigError as exc:
            if self._config_error != str(exc):
                self._notify(str(exc))
            self._config_error = str(exc)
            return True  # keep the servers that run: a half-saved file must not stop them
        self._config_error = None
        for error in config.errors.values():
            if error not in self._config.errors.values():
                self._notify(error)
        self._config = config
        return True

    def reload_if_changed(self) -> None:
        """Apply mcp.json edits without a restart (call before each turn; needs a loop)."""
        if not self._started:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the loop: leave the change for the next call there
            return
        if not self._read():
            return
        task = loop.create_task(self._apply())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def refresh(self) -> None:
        """Re-read mcp.json now and wait until its changes are applied."""
        if self._started and self._read():
            await self._apply()

    async def _apply(self) -> None:
        if self._apply_lock is None:
            self._apply_lock = asyncio.Lock()
        async with self._apply_lock:
            wanted = {n: c for n, c in self._config.servers.items() if c.enabled}
            stale = [c for n, c in self._connections.items() if wanted.get(n) != c.config]
            for conn in stale:
                del self._connections[conn.name]
            await asyncio.gather(*(c.stop() for c in stale), return_exceptions=True)
            new = [cfg for name, cfg in wanted.items() if name not in self._connections]
            if new and self._started:
                module = await asyncio.to_thread(
                    importlib.import_module, "koroku_desktop.mcp.connection"
                )
                for cfg in new:
                    conn = module.ServerConnection(cfg, self.timing, self.log_dir, self._on_conn)
                    conn.elicitor = self.elicitor
                    conn.secrets = self.secrets
                    conn.subscriptions.on_updated = self._resource_updated
                    self._connections[cfg.name] = conn
                    conn.start()
            self._changed()

    def _on_conn(self, conn: ServerConnection, notice: str | None) -> None:
        if notice:
            self._notify(notice)
        self._changed()

    def _notify(self, line: str) -> None:
        log.info("%s", line)
        for callback in list(self.notices):
            try:
                callback(line)
            except Exception:  # one failing listener must not stop the others
                log.exception("MCP notice callback failed")

    def _changed(self) -> None:
        for callback in list(self.on_status_changed):
            try:
                callback()
            except Exception:  # one failing listener must not stop the others
                log.exception("MCP status callback failed")

    # -- editing mcp.json (the settings page) ---------------------------------------------

    def entry(self, name: str) -> dict[str, Any] | None:
        """A configured server's entry as mcp.json holds it (None if unknown or invalid)."""
        cfg = self._config.servers.get(name)
        return None if cfg is None else cfg.to_json()

    def save_entry(self, name: str, entry: dict[str, Any], replaces: str | None = None) -> None:
        """Write one server to mcp.json (raises ValueError naming what is wrong), then apply."""
        server = mcp_config.parse_server(name.strip(), entry)
        if replaces != server.name and server.name in self._config.servers:
            raise ValueError(f"there is already a server called {server.name!r}")
        mcp_config.save_server(self.config_path, server, replaces)
        self.reload_if_changed()

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Turn one server on or off in mcp.json, then apply."""
        cfg = self._config.servers.get(name)
        if cfg is not None and cfg.enabled != enabled:
            mcp_config.save_server(
                self.config_path, ServerConfig(**{**cfg.__dict__, "enabled": enabled})
            )
            self.reload_if_changed()

    def remove_entry(self, name: str) -> None:
        """Delete one server from mcp.json (stopping it), then apply."""
        mcp_config.remove_server(self.config_path, name)
        self.reload_if_changed()

    # -- status ------------------------------------------------------------------------

    @property
    def config_error(self) -> str | None:
        """Why mcp.json as a whole could not be read (the last good servers keep running)."""
        return self._config_error

    def statuses(self) -> list[ServerStatus]:
        """Every configured server with its state, tools and last error, in file order."""
        names = assign_names(((t.server, t.name) for t in self._ready_tools()), self.reserved_names)
        return server_statuses(self._config, self._connections, names, self.timing.slow_after)

    def log_path(self, name: str) -> Path | None:
        """Where server `name`'s log is (its stderr, the SDK's records, its notifications)."""
        if self.log_dir is None:
            return None
        from koroku_desktop.mcp.sdk_log import log_file

        return log_file(self.log_dir, name)

    # -- the tool source ---------------------------------------------------------------

    def _ready_tools(self) -> list[McpToolInfo]:
        """Tools of connected servers still configured as they run (an edit may be pending)."""
        current = self._config.servers
        return [
            t
            for c in self._connections.values()
            if c.state == "ready" and current.get(c.name) == c.config
            for t in c.tools
            if t.task_support != "required" or c.tasks_ok  # offered only when callable
        ]

    def specs(self, reserved: Collection[str] = ()) -> list[ToolSpec]:
        """Declarations of the tools of every ready server (names avoid `reserved`)."""
        self.reload_if_changed()
        self.reserved_names = tuple(reserved)
        tools = self._ready_tools()
        names = assign_names(((t.server, t.name) for t in tools), reserved)
        self._names = {fn: pair for pair, fn in names.items()}
        specs = []
        readable = self._readable_servers()
        if readable and resource_tool.NAME not in reserved:
            specs.append(resource_tool.spec(readable))
        for info in tools:
            fn = names[(info.server, info.name)]
            about = f"[MCP server {info.server!r}, tool {info.name!r}] {info.description}"
            specs.append(ToolSpec(name=fn, description=about, parameters=_schema(info)))
        return sorted(specs, key=lambda s: s.name)

    def _call_limit(self) -> float:
        return self.timing.call_timeout

    def _readable_servers(self) -> list[str]:
        """Ready servers that list resources (the model may read theirs)."""
        current = self._config.servers
        return [
            c.name
            for c in self._connections.values()
            if c.state == "ready" and current.get(c.name) == c.config and c.resources
        ]

    def _lookup(self, name: str) -> tuple[ServerConnection | None, McpToolInfo | None]:
        pair = self._names.get(name)
        if pair is None:
            return None, None
        conn = self._connections.get(pair[0])
        info = None
        if conn is not None:
            info = next((t for t in conn.tools if t.name == pair[1]), None)
        return conn, info

    def owns(self, name: str) -> bool:
        """Whether `name` is an MCP tool (of the last declarations, or of a server ready since)."""
        if name == resource_tool.NAME:
            return name not in self.reserved_names and bool(self._readable_servers())
        if name not in self._names:
            self.specs(self.reserved_names)
        return name in self._names

    def is_read_only(self, name: str) -> bool:
        """Whether the server marked the tool `readOnlyHint` (reading a resource is)."""
        if name == resource_tool.NAME:
            return True
        _, info = self._lookup(name)
        return info is not None and info.read_only

    def is_destructive(self, name: str) -> bool:
        """Whether the server marked the tool `destructiveHint` (and not read-only)."""
        _, info = self._lookup(name)
        return info is not None and info.destructive and not info.read_only

    def describe(self, name: str) -> str | None:
        """`MCP server 'x', tool 'y'` and the server's hints, for approval cards and prompts."""
        if name == resource_tool.NAME:
            return "MCP resources — read-only"
        pair = self._names.get(name)
        if pair is None:
            return None
        _, info = self._lookup(name)
        hints = info.hints() if info is not None else []
        about = f"MCP server {pair[0]!r}, tool {pair[1]!r}"
        return f"{about} — {', '.join(hints)}" if hints else about

    async def call(
        self, name: str, args: dict[str, Any]
    ) -> tuple[dict[str, Any], list[InlineDataPart]]:
        """Run one MCP tool; every failure is an `{"error": ...}` response, never raised."""
        if name == resource_tool.NAME:
            return await self.read_resource(str(args.get("server", "")), str(args.get("uri", "")))
        pair = self._names.get(name)
        conn, _ = self._lookup(name)
        if pair is None or conn is None:
            return {"error": f"MCP tool {name!r} is not available now"}, []
        from koroku_desktop.mcp.connection import SIGN_IN_HELP, McpUnavailable, describe_error
        from koroku_desktop.mcp.results import to_response

        timeout = self.timing.call_timeout

        def report(
            done: float | None, total: float | None, text: str | None, task: str | None
        ) -> None:
            update = McpProgress(name, pair[0], pair[1], done, total, text, task)
            for callback in list(self.on_progress):
                try:
                    callback(update)
                except Exception:
                    log.exception("MCP progress callback failed")

        try:
            result = await conn.call(pair[1], args, timeout, report)
        except TimeoutError:
            return {"error": f"MCP server {pair[0]!r} did not answer within {timeout:g} s"}, []
        except McpUnavailable as exc:
            return {"error": str(exc)}, []
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 — an MCP tool failing in any way is that call's error result
            why = SIGN_IN_HELP.format(name=pair[0]) if conn.sign_in_refused else describe_error(exc)
            return {"error": f"MCP server {pair[0]!r}: {why}"}, []
        with contextlib.suppress(Exception):
            return to_response(result)
        return {"error": f"MCP server {pair[0]!r} sent a result Koroku cannot read"}, []

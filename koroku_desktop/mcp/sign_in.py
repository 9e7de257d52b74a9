"""Signing in to HTTP MCP servers (OAuth 2.1) from a front end: a mixin of `McpManager`.

The protocol runs in `oauth.py` (imported, with the SDK, only when a sign-in starts); this
part finds the server, routes the SDK's records to the server's log, and reconnects the
server afterwards so it reads its new tokens (or none, after a sign-out).
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from koroku_desktop.mcp import sdk_log
from koroku_desktop.mcp.config import McpConfig, ServerConfig
from koroku_desktop.mcp.state import SIGN_IN_TIMEOUT_S, SecretStore, SignInFailed, UrlOpener

if TYPE_CHECKING:
    from koroku_desktop.mcp.connection import ServerConnection


class McpSignIn:
    """`sign_in` and `sign_out` of HTTP servers (mixed into `McpManager`)."""

    config_path: Path
    log_dir: Path | None
    secrets: SecretStore | None
    _config: McpConfig
    _connections: dict[str, ServerConnection]
    _started: bool

    def _read(self) -> bool:
        raise NotImplementedError

    async def refresh(self) -> None:
        """Apply mcp.json edits (the manager's)."""
        raise NotImplementedError

    async def _apply(self) -> None:
        raise NotImplementedError

    def _notify(self, line: str) -> None:
        raise NotImplementedError

    async def _oauth_for(self, name: str) -> tuple[ServerConfig, SecretStore, ModuleType]:
        """HTTP server `name`'s config, the keyring and `oauth.py` (with the SDK, imported
        off the loop); `SignInFailed` when it is no HTTP server or there is no keyring."""
        if not self._started:
            self._read()
        cfg = self._http_server(name)
        assert self.secrets is not None
        oauth = await asyncio.to_thread(importlib.import_module, "koroku_desktop.mcp.oauth")
        return cfg, self.secrets, oauth

    def _http_server(self, name: str) -> ServerConfig:
        cfg = self._config.servers.get(name)
        if cfg is None:
            raise SignInFailed(f"there is no MCP server called {name!r} in {self.config_path}")
        if cfg.transport != "http":
            raise SignInFailed(f"MCP server {name!r} is not an HTTP server: it needs no sign-in")
        if self.secrets is None or not self.secrets.usable():
            raise SignInFailed("no OS keyring here: Koroku keeps OAuth tokens only there")
        return cfg

    async def sign_in(
        self, name: str, open_url: UrlOpener, browser_wait_s: float = SIGN_IN_TIMEOUT_S
    ) -> None:
        """Sign in to HTTP server `name` in the browser (`open_url` opens the page), keep the
        tokens in the keyring and reconnect with them. Raises `SignInFailed` saying why."""
        await self.refresh()
        cfg, secrets, oauth = await self._oauth_for(name)
        sdk_log.install(self.log_dir)
        sink = self._connections.get(name) or sdk_log.FileSink(self.log_dir, name)
        token = sdk_log.current_sink.set(sink)
        try:
            await oauth.sign_in(cfg, secrets, open_url, browser_wait_s)
        finally:
            sdk_log.current_sink.reset(token)
        await self._reconnect(name)

    async def sign_out(self, name: str) -> None:
        """Forget HTTP server `name`'s tokens and registration, and reconnect without them."""
        cfg, secrets, oauth = await self._oauth_for(name)
        await oauth.sign_out(cfg, secrets)
        await self._reconnect(name)

    async def _reconnect(self, name: str) -> None:
        """Start server `name` again, so it reads its tokens afresh."""
        conn = self._connections.pop(name, None)
        if conn is not None:
            await conn.stop()
        if self._started:
            await self._apply()

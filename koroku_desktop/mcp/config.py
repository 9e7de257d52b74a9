"""mcp.json: the MCP servers the user configured, in the format Claude desktop and Cursor use.

`{"mcpServers": {"name": {"command": ..., "args": [...], "env": {...}}}}` starts a stdio
server; `{"name": {"url": "http://...", "headers": {...}}}` talks to a streamable-HTTP one;
`"enabled": false` turns a server off. A bad entry is an error naming that server; the others
are still used. No SDK import here: reading the config must stay cheap at start-up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from koroku_desktop.domain.errors import ConfigError
from koroku_desktop.fsutil import PRIVATE, atomic_write

Transport = Literal["stdio", "http"]


class McpConfigError(ConfigError, ValueError):
    """mcp.json as a whole cannot be used (not JSON, or not an object)."""


@dataclass(frozen=True)
class ServerConfig:
    """One configured server; equal configs mean nothing to restart."""

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    enabled: bool = True

    def to_json(self) -> dict[str, Any]:
        """The entry as written in mcp.json."""
        out: dict[str, Any] = {}
        if self.transport == "stdio":
            out["command"] = self.command
            if self.args:
                out["args"] = list(self.args)
            if self.env:
                out["env"] = dict(self.env)
        else:
            out["url"] = self.url
            if self.headers:
                out["headers"] = dict(self.headers)
        if not self.enabled:
            out["enabled"] = False
        return out


@dataclass(frozen=True)
class McpConfig:
    """Every usable server, and why each unusable one was left out (server name -> error)."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def _str_map(value: Any, what: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f'"{what}" must be an object of strings')
    return tuple(sorted(value.items()))


def parse_server(name: str, entry: Any) -> ServerConfig:
    """One `mcpServers` entry -> a `ServerConfig`; raises ValueError saying what is wrong."""
    if not name.strip():
        raise ValueError("the server name is empty")
    if not isinstance(entry, dict):
        raise ValueError("the entry must be an object")
    enabled = entry.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValueError('"enabled" must be true or false')
    command, url = entry.get("command"), entry.get("url")
    if command is not None and url is not None:
        raise ValueError('give either "command" (stdio) or "url" (HTTP), not both')
    if url is not None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError('"url" must be an http:// or https:// address')
        headers = _str_map(entry.get("headers"), "headers")
        return ServerConfig(name, "http", url=url, headers=headers, enabled=enabled)
    if not isinstance(command, str) or not command.strip():
        raise ValueError('needs a "command" (stdio) or a "url" (HTTP)')
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError('"args" must be a list of strings')
    env = _str_map(entry.get("env"), "env")
    return ServerConfig(name, "stdio", command=command, args=tuple(args), env=env, enabled=enabled)


def parse_config(text: str) -> McpConfig:
    """The whole file; raises `McpConfigError` only when nothing in it can be used."""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise McpConfigError(f"mcp.json is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise McpConfigError("mcp.json must be a JSON object")
    entries = data.get("mcpServers", {})
    if not isinstance(entries, dict):
        raise McpConfigError('"mcpServers" in mcp.json must be an object')
    servers: dict[str, ServerConfig] = {}
    errors: dict[str, str] = {}
    for name, entry in entries.items():
        try:
            servers[name] = parse_server(name, entry)
        except ValueError as exc:
            errors[name] = f"MCP server {name!r} in mcp.json: {exc}"
    return McpConfig(servers, errors)


def read_config(path: Path) -> McpConfig:
    """mcp.json from disk (a missing file is no servers); raises `McpConfigError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return McpConfig()
    except (OSError, UnicodeDecodeError) as exc:
        raise McpConfigError(f"mcp.json cannot be read: {exc}") from exc
    return parse_config(text)


def _read_raw(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"mcpServers": {}}
    except (OSError, ValueError) as exc:
        raise McpConfigError(f"mcp.json cannot be edited: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise McpConfigError("mcp.json cannot be edited: it is not an mcpServers object")
    data.setdefault("mcpServers", {})
    return data


def _write_raw(path: Path, data: dict[str, Any]) -> None:
    # Only the user may read it: env and headers may hold tokens.
    atomic_write(path, json.dumps(data, indent=2) + "\n", mode=PRIVATE)


def save_server(path: Path, server: ServerConfig, replaces: str | None = None) -> None:
    """Add or replace one entry (renaming `replaces`), keeping every other key as it was."""
    data = _read_raw(path)
    entries: dict[str, Any] = data["mcpServers"]
    if replaces is not None and replaces != server.name:
        entries.pop(replaces, None)
    old = entries.get(server.name)
    extra = {k: v for k, v in old.items() if k not in _KNOWN_KEYS} if isinstance(old, dict) else {}
    entries[server.name] = {**extra, **server.to_json()}
    _write_raw(path, data)


def remove_server(path: Path, name: str) -> None:
    """Delete one entry from mcp.json (no error if it is not there)."""
    data = _read_raw(path)
    if data["mcpServers"].pop(name, None) is not None:
        _write_raw(path, data)


_KNOWN_KEYS = frozenset({"command", "args", "env", "url", "headers", "enabled"})

"""What each configured server is doing, as one `ServerStatus` row a front end shows.

The settings page and `koroku mcp list` read these: its state (a start that takes longer
than `slow_after` shows as slow, with what it waits for), tools with the names the model
sees, last error, restarts, protocol, resources, prompts and sign-in.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from koroku_desktop.mcp.config import McpConfig, ServerConfig
from koroku_desktop.mcp.state import ServerStatus

if TYPE_CHECKING:
    from koroku_desktop.mcp.connection import ServerConnection


def target(cfg: ServerConfig) -> str:
    """The command line (stdio) or URL (HTTP) of a server, for display."""
    return " ".join((cfg.command, *cfg.args)) if cfg.transport == "stdio" else cfg.url


def server_statuses(
    config: McpConfig,
    connections: Mapping[str, ServerConnection],
    names: Mapping[tuple[str, str], str],
    slow_after: float,
) -> list[ServerStatus]:
    """Every configured server with its state, tools and last error, in file order; `names`
    maps (server, tool) to the function name the model sees."""
    out: list[ServerStatus] = []
    for name, cfg in config.servers.items():
        conn = connections.get(name)
        where = target(cfg)
        if not cfg.enabled:
            out.append(ServerStatus(name, cfg.transport, False, "disabled", target=where))
        elif conn is None:
            out.append(ServerStatus(name, cfg.transport, True, "stopped", target=where))
        else:
            out.append(_connected(conn, names, slow_after, where))
    for name, error in config.errors.items():
        out.append(ServerStatus(name, "?", False, "invalid", last_error=error))
    return out


def _connected(
    conn: ServerConnection, names: Mapping[tuple[str, str], str], slow_after: float, where: str
) -> ServerStatus:
    name, cfg = conn.name, conn.config
    state, error = conn.state, conn.last_error
    if state == "starting" and (conn.slow or time.monotonic() - conn.attempt_started >= slow_after):
        state, error = "slow", conn.why_not_ready()
    model = {t.name: names[(name, t.name)] for t in conn.tools if (name, t.name) in names}
    return ServerStatus(
        name,
        cfg.transport,
        True,
        state,
        conn.tools,
        error,
        conn.restarts,
        where,
        model,
        conn.protocol,
        conn.resources,
        conn.prompts,
        conn.sign_in,
    )

"""`koroku mcp list`: the configured MCP servers, their state, tools and last error."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any, TextIO

from koroku_desktop.app.config import default_paths
from koroku_desktop.app.runtime import McpManager, McpProgress, ServerStatus, mcp_manager
from koroku_desktop.tools.registry import ToolRegistry

LIST_WAIT_S = 3.0
"""How long `mcp list` waits for slow servers by default (they are shown as slow, with why)."""


MCP_START_WAIT_S = 3.0
"""How long a terminal command waits for MCP servers to start before its first turn (slow
ones are reported and join when ready); `KOROKU_MCP_WAIT` (seconds) changes it."""


def mcp_start_wait() -> float:
    """`KOROKU_MCP_WAIT` if it is a number of seconds, else MCP_START_WAIT_S."""
    try:
        return max(0.0, float(os.environ.get("KOROKU_MCP_WAIT", MCP_START_WAIT_S)))
    except ValueError:
        return MCP_START_WAIT_S


def follow_progress(manager: McpManager | None) -> None:
    """Print each new progress line of a running MCP call on stderr (`  … ev x: 40%`)."""
    if manager is None:
        return
    last: dict[str, str] = {}

    def show(update: McpProgress) -> None:
        line = update.line()
        if last.get(update.function) != line:
            last[update.function] = line
            print(f"  … {line}", file=sys.stderr, flush=True)

    manager.on_progress.append(show)


def register(sub: Any) -> None:
    """Add `koroku mcp ...`."""
    mcp = sub.add_parser("mcp", help="MCP servers configured in mcp.json")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    listing = mcp_sub.add_parser("list", help="start each server, then show state and tools")
    listing.add_argument("--json", action="store_true", help="print JSON instead of text")
    listing.add_argument(
        "--wait",
        type=float,
        default=LIST_WAIT_S,
        metavar="SECONDS",
        help=f"how long to wait for the servers to start (default {LIST_WAIT_S:g})",
    )
    listing.set_defaults(handler=cmd_mcp_list)


async def _statuses(manager: McpManager, wait_s: float) -> list[ServerStatus]:
    try:
        await manager.start()
        await manager.wait_settled(wait_s)
        return manager.statuses()
    finally:
        await manager.stop()


def status_json(status: ServerStatus) -> dict[str, Any]:
    """One server as `koroku mcp list --json` prints it."""
    return {
        "name": status.name,
        "transport": status.transport,
        "enabled": status.enabled,
        "status": status.state,
        "target": status.target,
        "tools": [
            {
                "name": t.name,
                "model_name": status.model_names.get(t.name),
                "description": t.description,
                "read_only": t.read_only,
            }
            for t in status.tools
        ],
        "protocol": status.protocol or None,
        "resources": [
            {"uri": r.uri, "name": r.name, "mime_type": r.mime_type, "template": r.template}
            for r in status.resources
        ],
        "last_error": status.last_error,
    }


def print_statuses(statuses: list[ServerStatus], out: TextIO) -> None:
    """The servers as a table, each followed by its tools and last error."""
    header = ("SERVER", "TRANSPORT", "ENABLED", "STATUS", "TOOLS")
    rows = [
        (s.name, s.transport, "yes" if s.enabled else "no", s.state, str(len(s.tools)))
        for s in statuses
    ]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    out.write("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip() + "\n")
    for status, row in zip(statuses, rows, strict=True):
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")
        if status.target:
            out.write(f"    {status.target}\n")
        if status.tools:
            out.write("    tools (as the model sees them <- as the server names them):\n")
            for t in status.tools:
                seen = status.model_names.get(t.name, "(not offered)")
                flag = " (read-only)" if t.read_only else ""
                out.write(f"      {seen} <- {t.name}{flag}\n")
        if status.resources:
            templates = sum(1 for r in status.resources if r.template)
            listed = len(status.resources) - templates
            out.write(f"    resources: {listed}, templates: {templates} (read_mcp_resource)\n")
        if status.protocol:
            out.write(f"    protocol: {status.protocol}\n")
        if status.last_error:
            out.write(f"    last error: {status.last_error}\n")


def cmd_mcp_list(args: argparse.Namespace) -> int:
    """Print every server of mcp.json; exit 0 even when some fail (their errors are shown)."""
    paths = default_paths()
    manager = mcp_manager(paths)
    manager.reserved_names = tuple(ToolRegistry(paths.tools).names())
    statuses = asyncio.run(_statuses(manager, args.wait))
    if args.json:
        data: dict[str, Any] = {
            "config": str(paths.mcp_config),
            "config_error": manager.config_error,
            "servers": [status_json(s) for s in statuses],
        }
        print(json.dumps(data, indent=2))
        return 0
    if manager.config_error:
        print(f"koroku: {manager.config_error}", file=sys.stderr)
    if not statuses:
        print(f"No MCP servers configured (add them to {paths.mcp_config}).")
        return 0
    print_statuses(statuses, sys.stdout)
    return 0

"""`koroku mcp list`: the configured MCP servers, their state, tools and last error;
`koroku mcp login NAME` / `logout NAME`: OAuth sign-in to an HTTP server in the browser."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import webbrowser
from typing import Any, TextIO

from koroku_desktop.app.config import default_paths, keyring_backend_name
from koroku_desktop.app.runtime import (
    McpManager,
    McpProgress,
    ServerStatus,
    SignInFailed,
    mcp_manager,
)
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


def _wait_option(parser: Any, default: float, what: str) -> None:
    """`--wait SECONDS`: how long the command waits `what`."""
    parser.add_argument(
        "--wait",
        type=float,
        default=default,
        metavar="SECONDS",
        help=f"how long to wait {what} (default {default:g})",
    )


def register(sub: Any) -> None:
    """Add `koroku mcp ...`."""
    mcp = sub.add_parser("mcp", help="MCP servers configured in mcp.json")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    listing = mcp_sub.add_parser("list", help="start each server, then show state and tools")
    listing.add_argument("--json", action="store_true", help="print JSON instead of text")
    _wait_option(listing, LIST_WAIT_S, "for the servers to start")
    listing.set_defaults(handler=cmd_mcp_list)
    login = mcp_sub.add_parser("login", help="sign in to an HTTP server (OAuth, in the browser)")
    login.add_argument("name", help="the server's name in mcp.json")
    _wait_option(login, LOGIN_WAIT_S, "for the browser")
    login.set_defaults(handler=cmd_mcp_login)
    logout = mcp_sub.add_parser("logout", help="forget an HTTP server's sign-in")
    logout.add_argument("name", help="the server's name in mcp.json")
    logout.set_defaults(handler=cmd_mcp_logout)


LOGIN_WAIT_S = 300.0
"""How long `mcp login` waits for the browser to come back by default."""


def open_in_browser(url: str) -> None:
    """Say where the sign-in page is, then open it with `webbrowser` (in a thread: some
    browsers block until closed). The address holds no token, only the request."""
    print(
        f"Opening your browser to sign in. If it does not open, visit:\n  {url}",
        file=sys.stderr,
        flush=True,
    )
    threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()


def cmd_mcp_login(args: argparse.Namespace) -> int:
    """Sign in to one HTTP server; its tokens go to the OS keyring (exit 1 with why, if not)."""
    manager = mcp_manager(default_paths())
    try:
        asyncio.run(manager.sign_in(args.name, open_in_browser, args.wait))
    except SignInFailed as exc:
        print(f"koroku: {exc}", file=sys.stderr)
        return 1
    where = keyring_backend_name() or "OS keyring"
    print(f"Signed in to {args.name!r}; the tokens are kept in your OS keyring ({where}).")
    return 0


def cmd_mcp_logout(args: argparse.Namespace) -> int:
    """Forget one HTTP server's tokens and registration (exit 1 if there is no such server)."""
    manager = mcp_manager(default_paths())
    try:
        asyncio.run(manager.sign_out(args.name))
    except SignInFailed as exc:
        print(f"koroku: {exc}", file=sys.stderr)
        return 1
    print(f"Signed out of {args.name!r}: its tokens are removed from the OS keyring.")
    return 0


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
        "sign_in": status.sign_in or None,
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
        if status.sign_in == "sign in needed":
            out.write(f"    sign-in: needed (run `koroku mcp login {status.name}`)\n")
        elif status.sign_in:
            out.write(f"    sign-in: {status.sign_in} (OAuth)\n")
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

"""Real MCP servers for the tests: stdio ones started by Koroku, an HTTP one started here."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.mcp import McpManager, McpTiming

PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5"
    "ErkJggg=="
)
"""The 1x1 PNG tool_server.py's `snapshot` returns."""

SERVERS = Path(__file__).resolve().parent / "servers"
TOOL_SERVER = SERVERS / "tool_server.py"
HANG_SERVER = SERVERS / "hang_server.py"
RICH_SERVER = SERVERS / "rich_server.py"
EVERYTHING = (
    Path(__file__).resolve().parent
    / "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
"""The reference server, installed by `.ci/run` (`npm ci --prefix tests/mcp/node`)."""

FAST = McpTiming(
    start_timeout=15.0,
    call_timeout=20.0,
    health_interval=30.0,
    health_timeout=10.0,
    backoff_base=0.2,
    backoff_max=1.0,
    stop_timeout=8.0,
)


def stdio_entry(calls: Path, **extra: Any) -> dict[str, Any]:
    """An mcp.json entry starting tool_server.py over stdio, recording calls to `calls`."""
    env = {"MCP_CALLS_FILE": str(calls), **extra.pop("env", {})}
    return {"command": sys.executable, "args": [str(TOOL_SERVER)], "env": env, **extra}


def hang_entry() -> dict[str, Any]:
    """A stdio server that never answers."""
    return {"command": sys.executable, "args": [str(HANG_SERVER)]}


def rich_entry() -> dict[str, Any]:
    """rich_server.py over stdio (hints, blobs, logs, a lying output schema)."""
    return {"command": sys.executable, "args": [str(RICH_SERVER)]}


def everything_script() -> Path:
    """server-everything's entry script; fails (never skips) when it is not installed."""
    if not EVERYTHING.exists() or shutil.which("node") is None:
        pytest.fail(
            "server-everything is missing: run `npm ci --prefix tests/mcp/node` (.ci/run does)"
        )
    return EVERYTHING


def everything_entry() -> dict[str, Any]:
    """server-everything over stdio, as mcp.json starts it."""
    return {"command": str(shutil.which("node")), "args": [str(everything_script()), "stdio"]}


def wait_for_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    """Until something listens on 127.0.0.1:`port` (fails if `proc` exits first)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited")
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start")


def write_config(path: Path, servers: dict[str, Any]) -> None:
    """Write mcp.json, making sure its mtime moves even within one clock tick."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    if path.stat().st_mtime_ns <= before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def recorded_calls(calls: Path) -> list[dict[str, Any]]:
    """Every call the servers recorded, in order."""
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines()]


def pid_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(") ")[-1].split()[0] != "Z"
    except OSError:
        return False


def my_children() -> list[tuple[int, str]]:
    """(pid, state) of every process whose parent is this test process (zombies included)."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            found.append((int(entry.name), fields[0]))
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def calls_file(tmp_path: Path) -> Path:
    """Where the test servers record their calls."""
    return tmp_path / "calls.jsonl"


@contextmanager
def serving(argv: list[str], env: dict[str, str], port: int, what: str) -> Iterator[str]:
    """Run an HTTP MCP server process until the block ends; yields its /mcp URL."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc, what)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def http_server(calls_file: Path) -> Iterator[str]:
    """tool_server.py over streamable HTTP on a free 127.0.0.1 port; yields its URL."""
    port = _free_port()
    env = {**os.environ, "MCP_CALLS_FILE": str(calls_file)}
    argv = [sys.executable, str(TOOL_SERVER), "http", str(port)]
    with serving(argv, env, port, "the HTTP MCP server") as url:
        yield url


@pytest.fixture
def everything_http() -> Iterator[str]:
    """server-everything over streamable HTTP on a free port; yields its URL."""
    port = _free_port()
    argv = [str(shutil.which("node")), str(everything_script()), "streamableHttp"]
    with serving(argv, {**os.environ, "PORT": str(port)}, port, "server-everything") as url:
        yield url


@pytest.fixture
async def manager_factory(koroku_home: Path) -> AsyncIterator[Callable[..., McpManager]]:
    """Managers over `<home>/mcp.json` with short back-offs; all stopped at the end."""
    built: list[McpManager] = []

    def build(timing: McpTiming = FAST) -> McpManager:
        manager = McpManager(koroku_home / "mcp.json", koroku_home / "logs", timing)
        built.append(manager)
        return manager

    yield build
    for manager in built:
        await manager.stop()

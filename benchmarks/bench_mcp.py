"""MCP benchmarks: start-up with three MCP servers configured, and a turn offering their tools.

Run by hand (not by pytest):  uv run python benchmarks/bench_mcp.py [--repeat N] [--turns N]
Prints a table and writes benchmarks/results/bench_mcp.json.

1. Cold start: a fresh subprocess starts the desktop app (`Desktop.start`) until the chat
   window is shown and its history is in, with no mcp.json and with three stdio servers
   (tests/mcp/servers/tool_server.py, 9 tools each) configured; runs alternate. The servers
   start after the window is up, so the ratio should stay within 1.10. Also reported: the
   time until all three servers are ready, and whether the `mcp` SDK was imported before
   the window was shown (it must not be).
2. Turn latency: in one process, the real agent, SQLite log and Gemini adapter against the
   fake Gemini server answering with text; turns offering the built-in tools only against
   turns with three server-everything instances connected, their resources and templates
   listed (their 39 tools and read_mcp_resource on offer: names, specs, a bigger request).
   Median of `--turns`; target ratio <= 1.10.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SERVER = ROOT / "tests" / "mcp" / "servers" / "tool_server.py"
EVERYTHING = (
    ROOT / "tests/mcp/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)  # installed by `npm ci --prefix tests/mcp/node`
sys.path.insert(0, str(ROOT))

CHILD = """
import asyncio, sys, time
from PySide6.QtWidgets import QApplication
import qasync
from koroku_desktop.app.config import default_paths
from koroku_desktop.ui.app import Desktop
app = QApplication(sys.argv[:1])
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
desk = Desktop(app, default_paths(), use_tray=False)
async def main():
    await desk.start()
    shown = time.time()
    sdk_at_shown = "mcp" in sys.modules
    ready = shown
    manager = desk.runtime.mcp
    if manager is not None and manager.config_path.exists():
        for _ in range(2400):
            states = [s.state for s in manager.statuses()]
            if states and all(s == "ready" for s in states):
                break
            await asyncio.sleep(0.025)
        ready = time.time()
    print("SHOWN", shown, ready, int(sdk_at_shown), flush=True)
    await desk.quit()
with loop:
    loop.run_until_complete(main())
"""


def three_servers() -> dict[str, Any]:
    """mcp.json with three stdio servers."""
    entry = {"command": sys.executable, "args": [str(SERVER)]}
    return {"mcpServers": {name: dict(entry) for name in ("notes", "files", "web")}}


def three_everything() -> dict[str, Any]:
    """mcp.json with three server-everything instances (tools, resources, templates)."""
    node = shutil.which("node")
    if node is None or not EVERYTHING.exists():
        raise SystemExit("run `npm ci --prefix tests/mcp/node` first (server-everything)")
    entry = {"command": node, "args": [str(EVERYTHING), "stdio"]}
    return {"mcpServers": {name: dict(entry) for name in ("notes", "files", "web")}}


def timed_child(env: dict[str, str]) -> tuple[float, float, bool]:
    """(seconds to window shown, seconds to all servers ready, SDK imported before shown)."""
    started = time.time()
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    fields = next(x for x in out.splitlines() if x.startswith("SHOWN")).split()[1:]
    return float(fields[0]) - started, float(fields[1]) - started, fields[2] == "1"


def bench_cold_start(repeat: int, work: Path) -> dict[str, Any]:
    """Fresh-process start to the chat window, with and without three MCP servers."""
    homes = {"none": work / "none", "three": work / "three"}
    for home in homes.values():
        home.mkdir(parents=True)
    (homes["three"] / "mcp.json").write_text(json.dumps(three_servers()), encoding="utf-8")
    base_env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "GEMINI_API_KEY": "bench-key",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    shown: dict[str, list[float]] = {"none": [], "three": []}
    ready: list[float] = []
    sdk_early = False
    for _ in range(repeat):
        for label, home in homes.items():
            s, r, early = timed_child({**base_env, "KOROKU_HOME": str(home)})
            shown[label].append(s)
            sdk_early = sdk_early or early
            if label == "three":
                ready.append(r)
    none, three = statistics.median(shown["none"]), statistics.median(shown["three"])
    return {
        "window_no_mcp_s": none,
        "window_three_mcp_s": three,
        "ratio_three_vs_none": three / none,
        "servers_ready_s": statistics.median(ready),
        "mcp_sdk_imported_before_window": sdk_early,
    }


async def _turns(agent: Any, n: int) -> list[float]:
    times = []
    for i in range(n):
        t = time.perf_counter()
        result = await agent.run_turn(f"question {i}")
        times.append(time.perf_counter() - t)
        assert result.ok, result.error
    return times


async def bench_turns(turns: int, work: Path) -> dict[str, Any]:
    """Median turn time with and without three servers' tools and resources (fake Gemini)."""
    from koroku_desktop.agent.loop import Agent, AgentOptions
    from koroku_desktop.llm.gemini import GeminiChatModel
    from koroku_desktop.mcp import McpManager
    from koroku_desktop.store import SqliteEventLog
    from koroku_desktop.tools.approval import ApprovalPolicy
    from koroku_desktop.tools.registry import ToolRegistry
    from tests.fakes.gemini_server import FakeGemini

    class Yes:
        async def approve(self, request: Any) -> Any:
            raise AssertionError("no tool is called here")

    fake = FakeGemini("ok").start()
    os.environ["GOOGLE_GEMINI_BASE_URL"] = fake.base_url
    (work / "turns").mkdir()
    (work / "turns" / "mcp.json").write_text(json.dumps(three_everything()), encoding="utf-8")
    manager = McpManager(work / "turns" / "mcp.json", work / "turns" / "logs")
    await manager.start()
    await manager.wait_settled(60)
    statuses = manager.statuses()
    assert all(st.state == "ready" for st in statuses), statuses
    model = GeminiChatModel("bench-key")
    out: dict[str, Any] = {}
    try:
        for label, with_mcp in (("warmup", False), ("builtin", False), ("mcp", True)):
            registry = ToolRegistry(None)
            if with_mcp:
                registry.add_source(manager)
            log = SqliteEventLog(work / "turns" / f"{label}.db")
            options = AgentOptions("gemini-bench", 10, work, work / "turns")
            agent = Agent(log, model, registry, ApprovalPolicy(), Yes(), options)
            times = await _turns(agent, turns)
            out[f"turn_{label}_s"] = statistics.median(times)
            out[f"tools_{label}"] = len(registry.specs())
            log.close()
        out["resources_listed"] = sum(len(st.resources) for st in statuses)
        # The request the fake received last: how big it is with the MCP declarations.
        last = fake.generate_requests()[-1]
        out["request_bytes_mcp"] = len(json.dumps(last.body))
    finally:
        await manager.stop()
        await model.aclose()
        fake.stop()
    out["added_ms"] = (out["turn_mcp_s"] - out["turn_builtin_s"]) * 1000
    out["ratio_mcp_vs_builtin"] = out["turn_mcp_s"] / out["turn_builtin_s"]
    return out


def main() -> None:
    """Run both benchmarks and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    with tempfile.TemporaryDirectory(prefix="koroku-bench-mcp-") as tmp:
        work = Path(tmp)
        print("1. cold start with and without three MCP servers")
        cold = bench_cold_start(args.repeat, work)
        print("2. turn latency with and without their tools")
        turns = asyncio.run(bench_turns(args.turns, work))
    figures = {**cold, **turns}
    rows = [
        ("chat window shown, no MCP servers", f"{cold['window_no_mcp_s'] * 1000:.0f} ms", ""),
        (
            "chat window shown, three MCP servers",
            f"{cold['window_three_mcp_s'] * 1000:.0f} ms",
            f"x{cold['ratio_three_vs_none']:.3f}; target <= x1.10",
        ),
        ("all three servers ready", f"{cold['servers_ready_s'] * 1000:.0f} ms", "after start"),
        (
            "mcp SDK imported before the window",
            str(cold["mcp_sdk_imported_before_window"]),
            "must be False",
        ),
        (
            f"turn, {turns['tools_builtin']} built-in tools",
            f"{turns['turn_builtin_s'] * 1000:.1f} ms",
            "median, fake Gemini",
        ),
        (
            f"turn, {turns['tools_mcp']} tools, {turns['resources_listed']} resources listed",
            f"{turns['turn_mcp_s'] * 1000:.1f} ms",
            f"+{turns['added_ms']:.1f} ms, x{turns['ratio_mcp_vs_builtin']:.3f}; target <= x1.10",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"  {name.ljust(width)}  {value:>9}  {note}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_mcp.json").write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()

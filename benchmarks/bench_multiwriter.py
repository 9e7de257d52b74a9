"""One log, many writers: what following the log and the cross-process turn lock cost.

1. Idle follow cost: a follower process (the real AgentBridge following a real Agent on a
   qasync loop, offscreen) with nothing happening; its CPU seconds over `--idle` seconds with
   following on, minus the same process idle with following off, scaled to one minute.
2. Delay until a turn made elsewhere appears: another process appends `--turns` turns (a user
   message and an answer each, 0.2-0.6 s apart); the follower notes when each reaches its
   agent's `on_event_appended` hook. Median and worst of the delays from the commit time.
3. Per-turn cost of the lock: `Agent.run_turn` with an instant in-process model over a real
   SQLite log, with the SqliteTurnLock vs without any lock (both catch up before the turn).

Run by hand:  uv run python benchmarks/bench_multiwriter.py [--idle 20] [--turns 50]
Prints a table and writes benchmarks/results/bench_multiwriter.json. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def cpu_seconds() -> float:
    """User + system CPU of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- the follower process ----------------------------------------------------------------


def follower(db: Path, idle: float, turns: int) -> None:
    """Run in a child: measure idle CPU with and without following, then record delays."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtWidgets import QApplication

    from koroku_desktop.agent.loop import Agent, AgentOptions
    from koroku_desktop.store import SqliteEventLog
    from koroku_desktop.tools.approval import ApprovalPolicy
    from koroku_desktop.tools.registry import ToolRegistry
    from koroku_desktop.ui.bridge import AgentBridge

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    log = SqliteEventLog(db, writer="bench-follower@here")
    bridge = AgentBridge()
    options = AgentOptions("m", 5, db.parent, db.parent)
    agent = Agent(log, InstantModel(), ToolRegistry(None), ApprovalPolicy(), bridge, options)
    bridge.attach(agent, lambda _before, _limit: [])
    delays: list[float] = []
    done = asyncio.Event()

    def arrived(stored: Any) -> None:
        if stored.event.kind == "message" and stored.event.role == "model":
            delays.append(time.time() - stored.created_at)
            if len(delays) >= turns:
                done.set()

    agent.hooks.on_event_appended.append(arrived)

    files = [db, db.with_name(db.name + "-wal")]  # as the app follows them

    async def main() -> dict[str, Any]:
        await agent.load()
        bridge.follow(log.data_version, files)
        await asyncio.sleep(1)  # settle
        start = cpu_seconds()
        await asyncio.sleep(idle)
        following = cpu_seconds() - start
        bridge.stop_following()
        start = cpu_seconds()
        await asyncio.sleep(idle)
        quiet = cpu_seconds() - start
        bridge.follow(log.data_version, files)
        print("READY", flush=True)
        await asyncio.wait_for(done.wait(), timeout=turns * 3 + 30)
        bridge.stop_following()
        return {"idle_cpu_following": following, "idle_cpu_quiet": quiet, "delays": delays}

    with loop:
        result = loop.run_until_complete(main())
    log.close()
    print(json.dumps(result), flush=True)


class InstantModel:
    """A `ChatModel` that answers at once (only the agent's own costs are measured)."""

    async def generate(self, request: Any, on_text_delta: Any = None) -> Any:
        from koroku_desktop.domain.events import MessageEvent
        from koroku_desktop.domain.parts import TextPart

        return MessageEvent(role="model", origin="model", parts=[TextPart(text="ok")])

    async def count_tokens(self, request: Any) -> int:
        return 1

    async def approve(self, request: Any) -> Any:  # pragma: no cover - no tools here
        raise AssertionError("no tool calls in this benchmark")


def follow_figures(idle: float, turns: int, work: Path) -> dict[str, Any]:
    from koroku_desktop.domain.events import MessageEvent
    from koroku_desktop.domain.parts import TextPart
    from koroku_desktop.store import SqliteEventLog

    db = work / "follow" / "koroku.db"
    SqliteEventLog(db).close()
    child = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--role",
            "follower",
            "--db",
            str(db),
            "--idle",
            str(idle),
            "--turns",
            str(turns),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "READY", line
    writer = SqliteEventLog(db, writer="bench-writer@here")
    rng = random.Random(7)
    for n in range(turns):
        time.sleep(rng.uniform(0.2, 0.6))
        writer.append(
            "default",
            [
                MessageEvent(role="user", origin="person", parts=[TextPart(text=f"q{n}")]),
                MessageEvent(role="model", origin="model", parts=[TextPart(text=f"a{n}")]),
            ],
        )
    out, _ = child.communicate(timeout=turns * 3 + 60)
    writer.close()
    data = json.loads(out.strip().splitlines()[-1])
    delays = sorted(data["delays"])
    scale = 60.0 / idle
    return {
        "idle_seconds_measured": idle,
        "follow_cpu_s_per_minute": (data["idle_cpu_following"] - data["idle_cpu_quiet"]) * scale,
        "idle_cpu_following_s_per_minute": data["idle_cpu_following"] * scale,
        "idle_cpu_quiet_s_per_minute": data["idle_cpu_quiet"] * scale,
        "appear_delay_median_ms": statistics.median(delays) * 1000,
        "appear_delay_worst_ms": delays[-1] * 1000,
        "turns": len(delays),
    }


# -- the lock's per-turn cost ----------------------------------------------------------------


def lock_figures(turns: int, rounds: int, work: Path) -> dict[str, Any]:
    from koroku_desktop.agent.loop import Agent, AgentOptions
    from koroku_desktop.store import SqliteEventLog
    from koroku_desktop.store.local_lease import SqliteTurnLock
    from koroku_desktop.tools.approval import ApprovalPolicy
    from koroku_desktop.tools.registry import ToolRegistry

    async def run(locked: bool) -> float:
        db = work / f"{'locked' if locked else 'bare'}-{time.monotonic_ns()}" / "koroku.db"
        log = SqliteEventLog(db)
        lock = SqliteTurnLock(db, "bench") if locked else None
        model = InstantModel()
        options = AgentOptions("m", 5, db.parent, db.parent, compact_at_tokens=10**9)
        agent = Agent(
            log, model, ToolRegistry(None), ApprovalPolicy(), model, options, turn_lock=lock
        )
        await agent.load()
        for n in range(10):  # warm up
            await agent.run_turn(f"warm {n}")
        start = time.perf_counter()
        for n in range(turns):
            await agent.run_turn(f"question {n}")
        elapsed = time.perf_counter() - start
        if lock is not None:
            lock.close()
        log.close()
        return elapsed / turns

    bare_runs: list[float] = []
    locked_runs: list[float] = []
    for _ in range(rounds):  # interleaved, best of each: the machine's noise mostly cancels
        bare_runs.append(asyncio.run(run(False)))
        locked_runs.append(asyncio.run(run(True)))
    bare, locked = min(bare_runs), min(locked_runs)
    return {
        "turn_ms_without_lock": bare * 1000,
        "turn_ms_with_lock": locked * 1000,
        "lock_ratio": locked / bare,
        "lock_added_ms": (locked - bare) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--role", default="main")
    parser.add_argument("--db", type=Path)
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of idle measurement")
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--lock-turns", type=int, default=200)
    parser.add_argument("--lock-rounds", type=int, default=5)
    parser.add_argument("--skip-follow", action="store_true", help="only the lock figures")
    args = parser.parse_args()
    if args.role == "follower":
        follower(args.db, args.idle, args.turns)
        return
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        result = {
            "machine": platform.platform(),
            **({} if args.skip_follow else follow_figures(args.idle, args.turns, work)),
            **lock_figures(args.lock_turns, args.lock_rounds, work),
        }
    width = max(len(k) for k in result)
    for key, value in result.items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"{key:<{width}}  {shown}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_multiwriter.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

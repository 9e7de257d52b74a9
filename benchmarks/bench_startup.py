"""Start-up cost: `koroku ask` against a bare google-genai script, and the idle tray app.

Run by hand (not by pytest):  uv run python benchmarks/bench_startup.py [--pairs 7] [--idle 30]
Prints a table and writes benchmarks/results/bench_startup.json.

1. `koroku ask`: a fresh `python -m koroku_desktop ask "..."` on an empty data dir, against a
   fresh Python process that imports google-genai and streams the same reply from the same
   fake Gemini server (tests/fakes/gemini_server.py), in alternating pairs. Reported: the
   median wall time and CPU time (user + system, from `wait4`) of each and their ratios.
   Target: wall ratio <= 1.15. `--before TREE` adds a third arm, `koroku ask` from another
   checkout (e.g. `git archive` of main, compiled) run with the same Python and packages, the
   three arms taking turns first, so a change is measured against its branch point in one run.
2. The idle tray app: a fresh process starts the desktop app offscreen with its tray icon,
   then nothing happens for `--idle` seconds. Reported: its RSS after settling (target
   <= 150 MiB) and the context switches of all its threads while idle (a wake-up each;
   target: none), read from /proc.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))

QUESTION = "What is the capital of France?"

BARE = """
import os, sys
from google import genai
client = genai.Client(api_key=os.environ["GEMINI_API_KEY"])
stream = client.models.generate_content_stream(model="gemini-3-flash-preview", contents=sys.argv[1])
for chunk in stream:
    if chunk.text:
        sys.stdout.write(chunk.text)
print()
"""

IDLE_APP = """
import asyncio, sys
from PySide6.QtWidgets import QApplication
import qasync
from koroku_desktop.app.config import default_paths
from koroku_desktop.ui.app import open_desktop
app = QApplication(sys.argv[:1])
app.setQuitOnLastWindowClosed(False)
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
desk = open_desktop(app, default_paths(), use_tray=True)
async def main():
    await desk.start(show_window=False)
    print("UP", flush=True)
    await desk.done.wait()
with loop:
    loop.run_until_complete(main())
"""


def timed(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one fresh process (it must succeed)."""
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.stderr is not None
    if child.returncode != 0:
        raise RuntimeError(f"{argv[:4]} failed: {child.stderr.read().decode()}")
    child.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime


def bench_ask(pairs: int, work: Path, base_url: str, before: Path | None) -> dict[str, Any]:
    env = {
        **os.environ,
        "GEMINI_API_KEY": "bench-key",
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps its bytecode cache
    ask = [sys.executable, "-m", "koroku_desktop", "ask", QUESTION]
    arms: dict[str, tuple[list[str], dict[str, str], Path]] = {
        "ours": (ask, {**env, "PYTHONPATH": str(ROOT)}, ROOT),
        "bare": ([sys.executable, "-c", BARE, QUESTION], env, work),
    }
    if before is not None:  # its tree first on the path (and as the working directory)
        arms["before"] = (ask, {**env, "PYTHONPATH": str(before)}, before)
    names = list(arms)
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    for i in range(pairs):
        for name in names[i % len(names) :] + names[: i % len(names)]:  # each first in turn
            argv, arm_env, cwd = arms[name]
            if name != "bare":  # a fresh data dir for every run
                home = work / f"ask-{name}-{i}"
                arm_env = {**arm_env, "KOROKU_HOME": str(home), "KOROKU_WORKSPACE": str(work)}
            wall, cpu = timed(argv, arm_env, cwd)
            walls[name].append(wall)
            cpus[name].append(cpu)
    result: dict[str, Any] = {"load": os.getloadavg()[0], "walls": walls, "cpus": cpus}
    for name in names:
        result[f"{name}_s"] = statistics.median(walls[name])
        result[f"{name}_cpu_s"] = statistics.median(cpus[name])
    for name in names[:1] + names[2:]:
        result["ratio" if name == "ours" else f"{name}_ratio"] = (
            result[f"{name}_s"] / result["bare_s"]
        )
        result["cpu_ratio" if name == "ours" else f"{name}_cpu_ratio"] = (
            result[f"{name}_cpu_s"] / result["bare_cpu_s"]
        )
    return result


def _threads_switches(pid: int) -> int:
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        for line in status.read_text().splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                total += int(line.split()[1])
    return total


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def bench_idle(idle_s: float, work: Path, base_url: str) -> dict[str, Any]:
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "KOROKU_HOME": str(work / "idle"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        # With a key, as a person runs it; only the fake answers. Started in the tray, the app
        # warms the SDK up only when a window first opens (ui/background_work.OnFirstShow).
        "GEMINI_API_KEY": "bench-key",
        "GOOGLE_GEMINI_BASE_URL": base_url,
    }
    child = subprocess.Popen(
        [sys.executable, "-c", IDLE_APP], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "UP":
            raise RuntimeError("the app did not start")
        time.sleep(5)  # the start-up's background work (memory files, warm-up) settles
        rss = _rss_mib(child.pid)
        before = _threads_switches(child.pid)
        time.sleep(idle_s)
        wakeups = _threads_switches(child.pid) - before
    finally:
        child.terminate()
        child.wait(timeout=30)
    return {"rss_mib": rss, "idle_s": idle_s, "wakeups": wakeups}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--idle", type=float, default=30.0, help="seconds; 0 skips the tray app")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="TREE",
        help="another checkout whose `koroku ask` runs as a third arm, in turn with the others",
    )
    args = parser.parse_args()
    load_at_start = os.getloadavg()[0]
    from tests.fakes.gemini_server import FakeGemini

    fake = FakeGemini(default_text="Paris.").start()
    try:
        with tempfile.TemporaryDirectory(prefix="koroku-bench-startup-") as tmp:
            work = Path(tmp)
            ask = bench_ask(args.pairs, work, fake.base_url, args.before)
            idle = bench_idle(args.idle, work, fake.base_url) if args.idle > 0 else None
    finally:
        fake.stop()
    print(f"load average {load_at_start:.1f} at the start, {ask['load']:.1f} after `ask`")
    print(
        f"koroku ask   {ask['ours_s']:.3f} s  bare SDK {ask['bare_s']:.3f} s"
        f"  (CPU {ask['ours_cpu_s']:.3f} s vs {ask['bare_cpu_s']:.3f} s)"
    )
    print(
        f"  ratio      {ask['ratio']:.2f}x wall, {ask['cpu_ratio']:.2f}x CPU"
        f"  (target <= 1.15 wall, median of {args.pairs} runs each)"
    )
    if args.before is not None:
        print(
            f"  before     {ask['before_s']:.3f} s, CPU {ask['before_cpu_s']:.3f} s:"
            f" {ask['before_ratio']:.2f}x wall, {ask['before_cpu_ratio']:.2f}x CPU"
            f"  ({args.before})"
        )
    if idle is not None:
        print(f"idle tray    {idle['rss_mib']:.0f} MiB RSS (target <= 150)")
        print(f"  wake-ups   {idle['wakeups']} context switches in {idle['idle_s']:.0f} s")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_startup.json").write_text(json.dumps({"ask": ask, "idle": idle}, indent=2))


if __name__ == "__main__":
    main()

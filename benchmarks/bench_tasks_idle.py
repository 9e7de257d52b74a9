"""The idle tray app with 100 scheduled tasks: how often does it wake?

Run by hand (not by pytest):  uv run python benchmarks/bench_tasks_idle.py [--quiet 120] [--due 3]
Prints a table and writes benchmarks/results/bench_tasks_idle.json.

A data dir gets 100 plain reminders (no model call; the app notifies through the log where
there is no session bus): `--due` one-off times a minute apart, right after the quiet phase,
share 30 of them; the other 70 are due tomorrow. The desktop app starts offscreen in the tray
and is left alone:

1. Quiet phase (`--quiet` seconds, before the first due time): the context switches of all
   the app's threads (from /proc). Target: none — nothing polls.
2. Due phase (until a minute after the last due time): how many times the scheduler's timer
   woke (the app writes each wake to a file) against the number of distinct due times, the
   context switches meanwhile (a run writes to the log, so those are not zero), and those in
   the stretches away from the due times (sampled every 5 s from this process).
   Target: wakes == due times, and no switches between them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))

from benchmarks.bench_startup import IDLE_APP as STARTUP_APP  # noqa: E402
from benchmarks.bench_startup import _threads_switches  # noqa: E402

TASKS = 100
DUE_SHARE = 30
SAMPLE_S = 5.0
RUN_S = 30.0
"""A due time's runs (15 reminders written to the log) are done well within this."""

WAKE_LOG = """
import time
wakes = open(sys.argv[1], "a", buffering=1)
scheduler = desk.tasks.scheduler
def armed(soonest):
    wakes.write(f"{time.time()} {scheduler.wakes} {soonest}\\n")
scheduler.armed.connect(armed)
"""
# bench_startup's idle app, writing each of the scheduler's wakes to the file in argv[1]
IDLE_APP = STARTUP_APP.replace("\nasync def main():", WAKE_LOG + "async def main():", 1)
assert WAKE_LOG in IDLE_APP


def make_tasks(home: Path, first_due: datetime, due_times: int) -> list[datetime]:
    """100 reminders in `home`'s log: `due_times` minutes from `first_due` share 30 of them,
    the rest are due tomorrow. The due times, in UTC."""
    from koroku_desktop.agent.tasks import TaskBook
    from koroku_desktop.domain.schedules import Schedule
    from koroku_desktop.store import SqliteEventLog

    home.mkdir(parents=True, exist_ok=True)
    with SqliteEventLog(home / "koroku.db") as log:
        book = TaskBook(log, lambda: datetime.now(UTC))
        dues = [first_due + timedelta(minutes=m) for m in range(due_times)]
        tomorrow = first_due + timedelta(days=1)
        for n in range(TASKS):
            at = dues[n % due_times] if n < DUE_SHARE else tomorrow + timedelta(minutes=n)
            rule = at.replace(tzinfo=None).isoformat(timespec="minutes")
            book.create(
                Schedule("once", rule, "UTC", datetime.now(UTC)),
                prompt=f"reminder {n}",
                reminder=True,
            )
    return dues


def bench(quiet_s: float, due_times: int, work: Path) -> dict[str, Any]:
    home = work / "home"
    start = datetime.now(UTC) + timedelta(seconds=quiet_s + 30)
    first_due = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    dues = make_tasks(home, first_due, due_times)
    wake_file = work / "wakes.txt"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "KOROKU_HOME": str(home),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "GEMINI_API_KEY": "bench-key",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent-koroku-bench",
    }
    child = subprocess.Popen(
        [sys.executable, "-c", IDLE_APP, str(wake_file)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert child.stdout is not None
        if child.stdout.readline().strip() != "UP":
            raise RuntimeError("the app did not start")
        time.sleep(10)  # the start-up's background work settles
        quiet_from = time.time()
        before = _threads_switches(child.pid)
        quiet_end = min(time.time() + quiet_s, first_due.timestamp() - 5)
        time.sleep(max(0.0, quiet_end - time.time()))
        quiet_switches = _threads_switches(child.pid) - before
        quiet_len = time.time() - quiet_from
        wakes_before = _wake_count(wake_file)
        before = _threads_switches(child.pid)
        due_end = dues[-1].timestamp() + 60
        samples = [(time.time(), before)]
        while time.time() < due_end:
            time.sleep(min(SAMPLE_S, max(0.0, due_end - time.time())))
            samples.append((time.time(), _threads_switches(child.pid)))
        due_switches = samples[-1][1] - before
        # Switches in the sampling windows that hold no due time (nor the 30 s of runs
        # after one): what the app costs between its due times.
        busy = [(d.timestamp() - 1, d.timestamp() + RUN_S) for d in dues]
        between = sum(
            b - a
            for (t0, a), (t1, b) in itertools.pairwise(samples)
            if not any(t0 < hi and lo < t1 for lo, hi in busy)
        )
        between_s = sum(
            t1 - t0
            for (t0, _a), (t1, _b) in itertools.pairwise(samples)
            if not any(t0 < hi and lo < t1 for lo, hi in busy)
        )
        wakes = _wake_count(wake_file) - wakes_before
    finally:
        child.terminate()
        child.wait(timeout=30)
    return {
        "tasks": TASKS,
        "quiet_s": round(quiet_len, 1),
        "quiet_switches": quiet_switches,
        "due_times": due_times,
        "tasks_due": DUE_SHARE,
        "wakes": wakes,
        "due_switches": due_switches,
        "due_phase_s": round(due_end - quiet_end, 1),
        "between_switches": between,
        "between_s": round(between_s, 1),
    }


def _wake_count(path: Path) -> int:
    """The scheduler's wake counter as last written (0 before any)."""
    if not path.exists():
        return 0
    lines = [line.split() for line in path.read_text().splitlines() if line]
    return max((int(parts[1]) for parts in lines), default=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", type=float, default=120.0)
    parser.add_argument("--due", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="koroku-bench-tasks-") as tmp:
        result = bench(args.quiet, args.due, Path(tmp))
    print(f"tasks          {result['tasks']} ({result['tasks_due']} due in the run)")
    print(f"quiet phase    {result['quiet_switches']} context switches in {result['quiet_s']} s")
    print(
        f"due phase      {result['wakes']} scheduler wakes for {result['due_times']} due times "
        f"({result['due_switches']} context switches in {result['due_phase_s']} s)"
    )
    print(
        f"  between      {result['between_switches']} context switches in "
        f"{result['between_s']} s of the due phase away from its due times"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_tasks_idle.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

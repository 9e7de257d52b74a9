"""`koroku tasks run-due` with nothing due, against Python doing nothing and `koroku --version`.

Run by hand (not by pytest):  uv run python benchmarks/bench_tasks.py [--runs 15] [--tasks 100]
Prints a table and writes benchmarks/results/bench_tasks.json.

A data dir with `--tasks` scheduled tasks (prompts and reminders, RRULEs and cron
expressions, none due at the time given) and `--messages` other events in a few
conversations. Each round starts, in turn, fresh processes of: `python -c pass` (the floor),
`koroku --version` (the command line as every other command pays it), and `koroku tasks
run-due` (what the systemd timer runs every minute); reported is each one's median wall
time. Target: run-due < 0.3 s. For reference, a round where one reminder is due (the runtime
is opened then) is timed too. Wall and CPU (user + system) time are both reported: on a
busy machine the wall time mostly measures the wait for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
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

NOW = datetime(2026, 12, 7, 7, 30, tzinfo=UTC)  # Monday 08:30 in Berlin


def populate(home: Path, tasks: int, messages: int) -> None:
    from koroku_desktop.agent.tasks import TaskBook
    from koroku_desktop.domain.events import MessageEvent
    from koroku_desktop.domain.parts import TextPart
    from koroku_desktop.domain.schedules import Schedule
    from koroku_desktop.store import SqliteEventLog

    home.mkdir(parents=True, exist_ok=True)
    with SqliteEventLog(home / "koroku.db") as log:
        for c in range(5):
            batch = [
                MessageEvent(role="user" if i % 2 == 0 else "model", parts=[TextPart(text=f"m{i}")])
                for i in range(messages // 5)
            ]
            log.append(f"conv-{c}", batch)
        book = TaskBook(log, lambda: NOW - timedelta(hours=1))
        for i in range(tasks):
            start = NOW - timedelta(days=2)
            if i % 3 == 0:
                schedule = Schedule("cron", f"{i % 60} 9 * * *", "Europe/Berlin", start)
            elif i % 3 == 1:
                rule = f"FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=18;BYMINUTE={i % 60};BYSECOND=0"
                schedule = Schedule("rrule", rule, "America/New_York", start)
            else:
                schedule = Schedule("once", "2027-01-15T12:00", "UTC", start)
            book.create(
                schedule, prompt=f"task {i}", reminder=i % 2 == 0, conversation_id=f"conv-{i % 5}"
            )


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def one_reminder(home: Path) -> None:
    from koroku_desktop.agent.tasks import TaskBook
    from koroku_desktop.domain.schedules import Schedule
    from koroku_desktop.store import SqliteEventLog

    home.mkdir(parents=True, exist_ok=True)
    rule = "FREQ=DAILY;BYHOUR=8;BYMINUTE=0;BYSECOND=0"
    with SqliteEventLog(home / "koroku.db") as log:
        book = TaskBook(log, lambda: NOW - timedelta(days=1))
        book.create(
            Schedule("rrule", rule, "Europe/Berlin", NOW - timedelta(days=1)),
            prompt="Stretch",
            reminder=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        populate(home, args.tasks, args.messages)
        env = dict(os.environ, KOROKU_HOME=str(home), KOROKU_NOW=NOW.isoformat())
        env.pop("GEMINI_API_KEY", None)
        koroku = [sys.executable, "-m", "koroku_desktop"]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "koroku --version": [*koroku, "--version"],
            "koroku tasks run-due (nothing due)": [*koroku, "tasks", "run-due"],
        }
        for argv in commands.values():  # warm the file cache and the bytecode
            timed(argv, env)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(timed(argv, env))
        due_home = Path(tmp) / "due"
        one_reminder(due_home)
        with_due = []
        for day in range(3):  # one reminder due each time: the runtime opened, the run recorded
            moment = NOW + timedelta(days=day)
            due_env = dict(env, KOROKU_HOME=str(due_home), KOROKU_NOW=moment.isoformat())
            with_due.append(timed([*koroku, "tasks", "run-due"], due_env))
    wall = {name: statistics.median(t[0] for t in values) for name, values in times.items()}
    cpu = {name: statistics.median(t[1] for t in values) for name, values in times.items()}
    load = os.getloadavg()
    print(f"{args.tasks} tasks, {args.messages:,} other events, median of {args.runs} runs")
    print(f"(load average {load[0]:.1f} on {os.cpu_count()} cores)")
    print(f"  {'':<40} {'wall':>9}  {'CPU':>9}")
    for name in commands:
        print(f"  {name:<40} {wall[name] * 1000:6.0f} ms  {cpu[name] * 1000:6.0f} ms")
    due_wall = statistics.median(t[0] for t in with_due)
    due_cpu = statistics.median(t[1] for t in with_due)
    label = "koroku tasks run-due (a reminder due)"
    print(f"  {label:<40} {due_wall * 1000:6.0f} ms  {due_cpu * 1000:6.0f} ms")
    RESULTS.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "tasks": args.tasks,
        "messages": args.messages,
        "runs": args.runs,
        "median_wall_s": wall,
        "median_cpu_s": cpu,
        "run_due_with_a_reminder_due": with_due,
        "load": load,
    }
    (RESULTS / "bench_tasks.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

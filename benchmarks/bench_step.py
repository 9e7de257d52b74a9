"""Per-step overhead outside the model call: our in-memory ContextView vs a tutorial reload.

Ours: append the new event, `ContextView.apply`, `ContextView.contents()`.
Baseline (written like the tutorial's SessionManager): append the new event, SELECT the tail
since the boundary from SQLite, `json.loads` and pydantic-parse every row, build contents.

Run by hand:  uv run python benchmarks/bench_step.py [--steps N]
Prints a table and writes benchmarks/results/bench_step.json. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_store import RESULTS, realistic_events

from koroku_desktop.domain.context import SUMMARY_PREFIX, ContextView
from koroku_desktop.domain.events import CompactionEvent, MessageEvent, dump_event
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog

TAILS = (10, 100, 1000, 5000)
HISTORY = 200  # events before the compaction boundary
SUMMARY = "We planned the garden, fixed the budget report and booked the train tickets."


class TutorialStyleSession:
    """A SessionManager as the tutorial wrote it: every step reloads the tail from SQLite."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=5.0)
        self.conn.execute("PRAGMA journal_mode = wal")
        self.conn.execute("PRAGMA synchronous = normal")
        self.conn.execute("PRAGMA busy_timeout = 5000")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT,"
            " session_id TEXT, event_type TEXT, payload TEXT, created_at REAL)"
        )
        self.conn.execute("CREATE INDEX IF NOT EXISTS messages_session ON messages (session_id)")

    def add(self, session_id: str, event: MessageEvent | CompactionEvent) -> None:
        """Append one event in its own transaction."""
        payload = json.dumps(dump_event(event), ensure_ascii=False)
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute(
            "INSERT INTO messages (session_id, event_type, payload, created_at)"
            " VALUES (?, ?, ?, ?)",
            (session_id, event.kind, payload, time.time()),
        )
        self.conn.execute("COMMIT")

    def contents(self, session_id: str) -> list[MessageEvent]:
        """Reload the history since the last compaction and parse every row."""
        row = self.conn.execute(
            "SELECT id, payload FROM messages WHERE session_id = ? AND event_type = 'compaction'"
            " ORDER BY id DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        out: list[MessageEvent] = []
        after = 0
        if row is not None:
            compaction = CompactionEvent.model_validate(json.loads(row[1]))
            after = compaction.kept_from_seq - 1
            prefix = SUMMARY_PREFIX + compaction.summary
            out.append(MessageEvent(role="user", parts=[TextPart(text=prefix)]))
        for (payload,) in self.conn.execute(
            "SELECT payload FROM messages WHERE session_id = ? AND id > ?"
            " AND event_type = 'message' ORDER BY id",
            (session_id, after),
        ):
            out.append(MessageEvent.model_validate(json.loads(payload)))
        return out


def _history(tail: int, steps: int) -> tuple[list[MessageEvent], list[MessageEvent]]:
    events = realistic_events(HISTORY + tail + steps, seed=5)
    return events[: HISTORY + tail], events[HISTORY + tail :]


def _compaction() -> CompactionEvent:
    return CompactionEvent(summary=SUMMARY, covers_up_to_seq=HISTORY, kept_from_seq=HISTORY + 1)


def bench_ours(workdir: Path, tail: int, steps: int) -> dict[str, float]:
    """µs per step for append + apply + contents, after a restart-style live load."""
    before, new = _history(tail, steps)
    path = workdir / f"ours-{tail}.db"
    with SqliteEventLog(path) as log:
        log.append("main", before[:HISTORY])
        log.append("main", [_compaction()])
        for i in range(HISTORY, len(before), 500):
            log.append("main", before[i : i + 500])
    log = SqliteEventLog(path)
    live = log.load_live("main")
    view = ContextView.from_tail(live.boundary, live.events)
    assert len(view.contents()) == tail + 1
    total, append_t, view_t = [], [], []
    for event in new:
        t0 = time.perf_counter()
        (stored,) = log.append("main", [event])
        t1 = time.perf_counter()
        view.apply(stored)
        view.contents()
        t2 = time.perf_counter()
        total.append(t2 - t0)
        append_t.append(t1 - t0)
        view_t.append(t2 - t1)
    log.close()
    return {
        "us_per_step": statistics.median(total) * 1e6,
        "append_us": statistics.median(append_t) * 1e6,
        "apply_and_contents_us": statistics.median(view_t) * 1e6,
    }


def bench_baseline(workdir: Path, tail: int, steps: int) -> dict[str, float]:
    """µs per step for the tutorial-style append + reload + parse."""
    before, new = _history(tail, steps)
    session = TutorialStyleSession(workdir / f"baseline-{tail}-{steps}-{time.monotonic_ns()}.db")
    session.conn.execute("BEGIN")
    for event in before[:HISTORY]:
        session.conn.execute(
            "INSERT INTO messages (session_id, event_type, payload, created_at)"
            " VALUES ('main', 'message', ?, 0)",
            (json.dumps(dump_event(event)),),
        )
    session.conn.execute("COMMIT")
    session.add("main", _compaction())
    session.conn.execute("BEGIN")
    for event in before[HISTORY:]:
        session.conn.execute(
            "INSERT INTO messages (session_id, event_type, payload, created_at)"
            " VALUES ('main', 'message', ?, 0)",
            (json.dumps(dump_event(event)),),
        )
    session.conn.execute("COMMIT")
    assert len(session.contents("main")) == tail + 1
    total = []
    for event in new:
        t0 = time.perf_counter()
        session.add("main", event)
        session.contents("main")
        total.append(time.perf_counter() - t0)
    session.conn.close()
    return {"us_per_step": statistics.median(total) * 1e6}


def main(argv: list[str] | None = None) -> int:
    """Run the step benchmark at each tail length, print a table, write JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300, help="max steps measured per tail")
    parser.add_argument(
        "--baseline-budget", type=float, default=20.0, help="seconds of baseline steps per tail"
    )
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    header = (
        f"{'tail':>6} {'ours µs/step':>13} {'(append':>9} {'view)':>7}"
        f" {'baseline µs/step':>17} {'ratio':>8}"
    )
    print(header)
    with tempfile.TemporaryDirectory(prefix="koroku-step-") as tmp:
        workdir = Path(tmp)
        for tail in TAILS:
            # The tail grows by one per step: measure few steps on short tails.
            ours = bench_ours(workdir, tail, min(args.steps, max(20, tail // 5)))
            probe = bench_baseline(workdir, tail, 3)["us_per_step"]
            budget = int(args.baseline_budget * 1e6 / max(probe, 1.0))
            steps = max(5, min(args.steps, max(20, tail // 5), budget))
            base = bench_baseline(workdir, tail, steps)
            ratio = base["us_per_step"] / ours["us_per_step"]
            results[str(tail)] = {
                "ours": ours,
                "baseline": base,
                "baseline_steps": steps,
                "ratio": ratio,
            }
            print(
                f"{tail:>6} {ours['us_per_step']:>13.1f} {ours['append_us']:>9.1f}"
                f" {ours['apply_and_contents_us']:>7.1f} {base['us_per_step']:>17.1f}"
                f" {ratio:>7.1f}x"
            )
    flat = (
        results[str(TAILS[-1])]["ours"]["us_per_step"]
        / results[str(TAILS[0])]["ours"]["us_per_step"]
    )
    at_1000 = results["1000"]["ratio"]
    print(f"\nours at {TAILS[-1]} / ours at {TAILS[0]}: {flat:.2f} (flat is ~1)")
    print(
        f"baseline / ours at 1000: {at_1000:.1f}x (target >= 20x) "
        f"{'PASS' if at_1000 >= 20 else 'MISS'}"
    )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "bench_step.json"
    report = {
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "args": vars(args),
        "tails": results,
        "ours_growth_last_vs_first": flat,
    }
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

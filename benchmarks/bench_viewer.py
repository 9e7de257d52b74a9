"""History viewer benchmark: time to first rows shown on a 1,000,000-event log.

Run by hand (not by pytest):  uv run python benchmarks/bench_viewer.py [--events N]
Builds the log with raw sqlite3 `executemany` into a file created by `SqliteEventLog`, then
opens the History & memory dialog offscreen on the qasync loop and measures, against the
same dialog on a 1,000-event log (the baseline, same run):

- open: dialog constructed and shown until the first page of the timeline is in the model
  and painted (target < 1 s on the big log);
- next page: one `fetchMore` (scrolling down);
- jump: a search hit's jump to the oldest event;
- filter: only the clears (a kind that is rare in the big log).

Prints a table and writes benchmarks/results/bench_viewer.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtWidgets import QApplication

from koroku_desktop.store import SqliteEventLog
from koroku_desktop.ui.viewer.dialog import HistoryDialog
from koroku_desktop.ui.widgets import theme

RESULTS = Path(__file__).resolve().parent / "results"
BATCH = 50_000


def _payload(i: int) -> tuple[str, str]:
    if i % 400 == 399:
        body = {
            "kind": "compaction",
            "schema_version": 1,
            "summary": f"Summary {i}: we discussed files, budgets and the garden.",
            "covers_up_to_seq": i - 100,
            "kept_from_seq": i - 99,
            "tokens_before": 120_000,
            "tokens_after": 4_000,
        }
        return "compaction", json.dumps(body)
    if i % 50_000 == 49_999:
        return "cleared", '{"kind":"cleared","schema_version":1}'
    role = "user" if i % 2 == 0 else "model"
    text = f"message {i}: please read the project config and summarise the build output"
    body = {
        "kind": "message",
        "schema_version": 1,
        "role": role,
        "parts": [{"kind": "text", "text": text}],
    }
    return "message", json.dumps(body)


def build_log(path: Path, events: int) -> None:
    """A log of `events` rows (a compaction every 400, a clear every 50,000), written raw."""
    SqliteEventLog(path).close()
    start = time.time() - events  # one event a second, oldest first
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=OFF")
        for first in range(0, events, BATCH):
            rows = []
            for i in range(first, min(events, first + BATCH)):
                kind, payload = _payload(i)
                rows.append(("default", kind, 1, payload, start + i))
            conn.executemany(
                "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                rows,
            )
        conn.commit()


async def measure_once(app: QApplication, log: SqliteEventLog, home: Path) -> dict[str, float]:
    """Seconds of each viewer step, once, on a fresh dialog."""
    took: dict[str, float] = {}
    t0 = time.perf_counter()
    dialog = HistoryDialog(log, home, home / "memory", "default")
    dialog.show()
    model = dialog.timeline.model
    await model.first_page()
    dialog.timeline.table.viewport().repaint()
    app.processEvents()
    took["open"] = time.perf_counter() - t0

    loaded = asyncio.Event()
    model.page_loaded.connect(lambda _n: loaded.set())
    t0 = time.perf_counter()
    model.fetchMore()
    await loaded.wait()
    app.processEvents()
    took["next page"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    await dialog.jump_to(1)
    app.processEvents()
    took["jump"] = time.perf_counter() - t0
    assert model.entry_at(model.row_of_seq(1)) is not None

    t0 = time.perf_counter()
    for kind, box in dialog.timeline.kind_boxes.items():
        box.blockSignals(True)
        box.setChecked(kind == "cleared")
        box.blockSignals(False)
    await dialog.timeline.apply_filters()
    app.processEvents()
    took["filter"] = time.perf_counter() - t0

    dialog.close()
    dialog.deleteLater()
    app.processEvents()
    return took


async def measure(app: QApplication, home: Path, repeat: int) -> dict[str, float]:
    """Median seconds of each viewer step on the log in `home`."""
    log = SqliteEventLog(home / "koroku.db")
    (home / "memory").mkdir(exist_ok=True)
    try:
        runs = [await measure_once(app, log, home) for _ in range(repeat)]
    finally:
        log.close()
    return {step: statistics.median(r[step] for r in runs) for step in runs[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--baseline", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # closing a measured dialog must not stop the loop
    theme.apply(app, "light")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    results: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine()}
    with tempfile.TemporaryDirectory() as tmp:
        sizes = {"baseline": args.baseline, "big": args.events}
        for name, events in sizes.items():
            home = Path(tmp) / name
            home.mkdir()
            t0 = time.perf_counter()
            build_log(home / "koroku.db", events)
            print(f"built a {events:,}-event log in {time.perf_counter() - t0:.1f} s")

        async def run_all() -> None:
            for name, events in sizes.items():
                medians = await measure(app, Path(tmp) / name, args.repeat)
                results[name] = {"events": events, **medians}
            await asyncio.sleep(0.2)  # let abandoned page reads of closed dialogs finish

        with loop:
            loop.run_until_complete(run_all())
    base, big = results["baseline"], results["big"]
    print(f"\n{'step':<12}{base['events']:>12,} ev{big['events']:>14,} ev{'ratio':>9}")
    for step in ("open", "next page", "jump", "filter"):
        ratio = big[step] / base[step] if base[step] else float("nan")
        print(f"{step:<12}{base[step] * 1000:>12.1f} ms{big[step] * 1000:>14.1f} ms{ratio:>9.2f}")
    verdict = "meets" if big["open"] < 1.0 else "MISSES"
    print(
        f"\ntime to first rows on {big['events']:,} events: {big['open'] * 1000:.0f} ms "
        f"({verdict} the < 1 s target)"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_viewer.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

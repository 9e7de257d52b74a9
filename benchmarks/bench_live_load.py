"""Loading the live context when compactions cover the messages they summarised by id.

Two logs of `--events` events in one conversation, written through `SqliteEventLog.append`,
each with a compaction every `--every` messages that summarises the turn before it:

- **by id** (this version): each compaction lists the ids it newly covers and the summary it
  extends (`covered_ids`, `base_id`), so turns merged from another device stay live;
- **by seq** (the baseline, as compactions were written before): each compaction only says
  where the live part starts (`kept_from_seq`).

Measured: opening the file read-only plus `load_live`, median of `--repeat` runs, and the
ratio of the two. Both load the same 100 live messages.

Run by hand:  uv run python benchmarks/bench_live_load.py [--events 300000] [--every 100]
Prints a table and writes benchmarks/results/bench_live_load.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from koroku_desktop.domain.events import CompactionEvent, MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog

RESULTS = Path(__file__).parent / "results" / "bench_live_load.json"


def build(path: Path, events: int, every: int, by_id: bool) -> None:
    """A log of `events` messages with a compaction after every `every` of them."""
    with SqliteEventLog(path) as log:
        previous: list[str] = []
        base: str | None = None
        for start in range(0, events, every):
            batch = [
                MessageEvent(
                    role="user" if n % 2 == 0 else "model",
                    origin="person" if n % 2 == 0 else "model",
                    parts=[TextPart(text=f"message {start + n} about the garden schedule")],
                )
                for n in range(every)
            ]
            stored = log.append("c", batch)
            if previous:
                compaction = CompactionEvent(
                    summary=f"summary up to message {start}",
                    covers_up_to_seq=stored[0].seq - 1,
                    kept_from_seq=stored[0].seq,
                    covered_ids=previous if by_id else None,
                    base_id=base if by_id else None,
                )
                base = log.append("c", [compaction])[0].event_id
            previous = [s.event_id for s in stored]


def time_load(path: Path, repeat: int) -> tuple[float, int]:
    """Median milliseconds of open + `load_live`, and how many live events it returned."""
    times, live = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        with SqliteEventLog(path, read_only=True) as log:
            live = len(log.load_live("c").events)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), live


def main(argv: list[str] | None = None) -> int:
    """Build both logs, time their loads, print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="koroku-live-") as tmp:
        figures: dict[str, float] = {}
        for name, by_id in (("by_seq", False), ("by_id", True)):
            path = Path(tmp) / f"{name}.db"
            started = time.perf_counter()
            build(path, args.events, args.every, by_id)
            built = time.perf_counter() - started
            median, live = time_load(path, args.repeat)
            figures[f"{name}_ms"] = median
            print(f"{name:7} built in {built:5.1f} s; open + load_live {median:8.1f} ms", end="")
            print(f" ({live} live)")
    ratio = figures["by_id_ms"] / figures["by_seq_ms"]
    print(f"by id / by seq: x{ratio:.1f}", end="")
    print(f"  ({args.events:,} events, a compaction every {args.every})")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({**vars(args), **figures, "ratio": ratio}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

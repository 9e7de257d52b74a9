"""Store benchmarks: append throughput vs raw sqlite3, startup load and search on a big log.

Run by hand (not by pytest):  uv run python benchmarks/bench_store.py [--events N]
Prints a table and writes benchmarks/results/bench_store.json. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import Any

from koroku_desktop.domain.events import CompactionEvent, Event, MessageEvent, dump_event
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.search.searchable import searchable_text

RESULTS = Path(__file__).resolve().parent / "results"

# -- a realistic corpus -------------------------------------------------------------------


_BASE_TEXT = (
    "the a of to and in is it that for on with as this be are you I file can will "
    "not project code function error test window python build run data config path "
    "line read write edit shell command output result please thanks could would "
    "should meeting invoice report draft email summary budget schedule tomorrow "
    "yesterday kitchen garden bicycle holiday recipe doctor insurance train ticket "
    "birthday database migration index query latency memory thread process socket "
    "timeout signature gemini model tool call response context compaction history "
    "search"
)
_BASE = _BASE_TEXT.split()


def vocabulary(size: int = 6000, seed: int = 7) -> list[str]:
    """A Zipf-ish vocabulary: common words first, then made-up rarer ones."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = list(_BASE)
    while len(words) < size:
        words.append("".join(rng.choice(letters) for _ in range(rng.randint(4, 10))))
    return words


def _sentence(rng: random.Random, words: list[str], n: int) -> str:
    picks = [words[min(int(rng.paretovariate(1.1)) - 1, len(words) - 1)] for _ in range(n)]
    return " ".join(picks).capitalize() + "."


def realistic_events(count: int, seed: int = 1) -> list[MessageEvent]:
    """A conversation: user turns, model replies (some with tool calls), tool results."""
    rng = random.Random(seed)
    words = vocabulary()
    out: list[MessageEvent] = []
    while len(out) < count:
        out.append(
            MessageEvent(
                role="user",
                origin="person",
                parts=[TextPart(text=_sentence(rng, words, rng.randint(8, 40)))],
            )
        )
        if rng.random() < 0.5:
            args = {"path": f"/home/me/{rng.choice(words)}/{rng.choice(words)}.txt"}
            out.append(
                MessageEvent(
                    role="model",
                    origin="model",
                    parts=[
                        TextPart(text=_sentence(rng, words, 20), thought=True),
                        FunctionCallPart(
                            name="read_file",
                            args=args,
                            id=f"call-{len(out)}",
                            thought_signature="c2lnbmF0dXJlLWJ5dGVzLTAxMjM0NTY3ODk=",
                        ),
                    ],
                )
            )
            out.append(
                MessageEvent(
                    role="user",
                    origin="tools",
                    parts=[
                        FunctionResponsePart(
                            name="read_file",
                            id=f"call-{len(out) - 1}",
                            response={"content": _sentence(rng, words, rng.randint(30, 120))},
                            call_args=args,
                        )
                    ],
                )
            )
        out.append(
            MessageEvent(
                role="model",
                origin="model",
                parts=[TextPart(text=_sentence(rng, words, rng.randint(20, 80)))],
            )
        )
    return out[:count]


# -- helpers ------------------------------------------------------------------------------


class _NoSearchLog(SqliteEventLog):
    """The same log with nothing sent to the full-text index (to price the index)."""

    def _search_text(self, event: Event) -> str:
        return ""


def _raw_connect(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection with the store's pragmas."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=5.0)
    conn.execute("PRAGMA journal_mode = wal")
    conn.execute("PRAGMA synchronous = normal")
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def _payloads(events: list[MessageEvent]) -> list[tuple[str, str]]:
    return [
        (json.dumps(dump_event(e), ensure_ascii=False, separators=(",", ":")), searchable_text(e))
        for e in events
    ]


def _time_ours(workdir: Path, events: list[MessageEvent], cls: type[SqliteEventLog]) -> float:
    path = workdir / f"ours-{cls.__name__}-{time.monotonic_ns()}.db"
    log = cls(path)
    start = time.perf_counter()
    for event in events:
        log.append("bench", [event])
    elapsed = time.perf_counter() - start
    log.close()
    return len(events) / elapsed


def _time_raw(workdir: Path, rows: list[tuple[str, str]], fts: bool) -> float:
    path = workdir / f"raw-{fts}-{time.monotonic_ns()}.db"
    SqliteEventLog(path).close()  # same schema and index
    conn = _raw_connect(path)
    start = time.perf_counter()
    for payload, text in rows:
        conn.execute("BEGIN IMMEDIATE")
        cursor = conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
            " VALUES (?, 'message', 1, ?, ?)",
            ("bench", payload, time.time()),
        )
        if fts and text:
            conn.execute(
                "INSERT INTO events_fts (rowid, body) VALUES (?, ?)", (cursor.lastrowid, text)
            )
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return len(rows) / elapsed


def bench_append(workdir: Path, count: int, rounds: int) -> dict[str, float]:
    """Single-event appends per second: ours vs raw sqlite3, with and without FTS (best of N)."""
    events = realistic_events(count)
    rows = _payloads(events)
    best: dict[str, float] = {}
    runs: list[tuple[str, Callable[[], float]]] = [
        ("ours_fts", lambda: _time_ours(workdir, events, SqliteEventLog)),
        ("ours_no_fts", lambda: _time_ours(workdir, events, _NoSearchLog)),
        ("raw_fts", lambda: _time_raw(workdir, rows, fts=True)),
        ("raw_no_fts", lambda: _time_raw(workdir, rows, fts=False)),
    ]
    for _ in range(rounds):
        for name, run in runs:
            best[name] = max(best.get(name, 0.0), run())
    return best


# -- the big log ----------------------------------------------------------------------------

POOL_SIZE = 4000
POOL_SEED = 3
COMPACT_EVERY = 400
KEEP_AFTER_COMPACTION = 40


def build_big_log(path: Path, total: int) -> dict[str, int]:
    """A `total`-event log built fast with executemany into a file SqliteEventLog created.

    90% of rows belong to the main conversation, with a compaction every COMPACT_EVERY rows;
    the rest are quick-ask conversations. Payloads cycle through a pool of realistic events.
    """
    SqliteEventLog(path).close()
    pool = _payloads(realistic_events(POOL_SIZE, seed=POOL_SEED))
    conn = _raw_connect(path)
    conn.execute("PRAGMA synchronous = off")
    conn.execute("PRAGMA cache_size = -262144")
    rng = random.Random(11)
    seq, main_rows, last_compaction = 0, 0, 0
    batch: list[tuple[int, str, str, str, float]] = []
    fts: list[tuple[int, str]] = []

    def flush() -> None:
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO events (seq, conversation_id, kind, schema_version, payload,"
            " created_at) VALUES (?, ?, ?, 1, ?, ?)",
            batch,
        )
        conn.executemany("INSERT INTO events_fts (rowid, body) VALUES (?, ?)", fts)
        conn.execute("COMMIT")
        batch.clear()
        fts.clear()

    while seq < total:
        seq += 1
        if rng.random() < 0.1:
            payload, text = pool[seq % len(pool)]
            batch.append((seq, f"quick-{seq // 1000}", "message", payload, float(seq)))
        elif main_rows and main_rows % COMPACT_EVERY == 0 and last_compaction != main_rows:
            last_compaction = main_rows
            summary = f"Summary {seq}: we worked on the budget report and the garden schedule."
            event = CompactionEvent(
                summary=summary,
                covers_up_to_seq=seq - KEEP_AFTER_COMPACTION - 1,
                kept_from_seq=seq - KEEP_AFTER_COMPACTION,
            )
            batch.append((seq, "main", "compaction", json.dumps(dump_event(event)), float(seq)))
            text = summary
        else:
            main_rows += 1
            payload, text = pool[seq % len(pool)]
            batch.append((seq, "main", "message", payload, float(seq)))
        if text:
            fts.append((seq, text))
        if len(batch) >= 20000:
            flush()
    if batch:
        flush()
    conn.close()
    return {"rows": total, "main_rows": main_rows}


# -- reads on the big log ---------------------------------------------------------------


def _median_ms(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def pick_queries() -> dict[str, str]:
    """Two-word queries drawn from the corpus: common, rare, never together, and a prefix."""
    docs = [
        set(re.findall(r"[a-z]+", text.lower()))
        for _, text in _payloads(realistic_events(POOL_SIZE, seed=POOL_SEED))
    ]
    df = Counter(word for doc in docs for word in doc)
    common = [w for w, _ in df.most_common(300) if len(w) > 2]
    rarest = [sorted(doc, key=lambda w: (df[w], w))[:2] for doc in docs if len(doc) > 1]
    rare = min(rarest, key=lambda pair: (df[pair[1]], pair))
    disjoint = next(
        f"{a} {b}"
        for a, b in combinations(common[10:300], 2)
        if not any(a in doc and b in doc for doc in docs)
    )
    return {
        "search_common_pair": f"{common[0]} {common[1]}",
        "search_rare_pair": " ".join(rare),
        "search_disjoint_pair": disjoint,
        "search_prefix_pair": f"{common[3][:3]}* {common[4]}",
    }


def bench_reads(path: Path, repeat: int) -> dict[str, Any]:
    """Startup (open + load_live), search and paging on the big log, median ms."""

    def startup() -> None:
        log = SqliteEventLog(path)
        log.load_live("main")
        log.close()

    log = SqliteEventLog(path)
    live = log.load_live("main")
    last = log.last_seq()
    queries = pick_queries()
    out: dict[str, Any] = {
        "live_tail_events": len(live.events),
        "startup_open_and_load_live_ms": _median_ms(startup, repeat),
        "load_live_ms": _median_ms(lambda: log.load_live("main"), repeat),
        "entries_newest_page_main_ms": _median_ms(
            lambda: log.entries("main", newest_first=True, limit=500), repeat
        ),
        "entries_page_middle_all_ms": _median_ms(
            lambda: log.entries(before_seq=last // 2, newest_first=True, limit=500), repeat
        ),
        "entries_compactions_main_ms": _median_ms(
            lambda: log.entries("main", kinds=["compaction"], newest_first=True, limit=50),
            repeat,
        ),
    }
    for name, query in queries.items():
        out[name + "_ms"] = _median_ms(lambda q=query: log.search(q), repeat)  # type: ignore[misc]
        out[name + "_hits"] = len(log.search(query))
        out[name + "_query"] = query
    log.close()
    return out


# -- report -----------------------------------------------------------------------------


def _row(name: str, value: str, target: str = "", ok: bool | None = None) -> str:
    verdict = "" if ok is None else ("PASS" if ok else "MISS")
    return f"{name:<44} {value:>14}  {target:<10} {verdict}"


def main(argv: list[str] | None = None) -> int:
    """Run the store benchmarks, print a table, write JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000, help="rows in the big log")
    parser.add_argument("--appends", type=int, default=5000, help="appends per throughput run")
    parser.add_argument("--rounds", type=int, default=3, help="throughput runs (best kept)")
    parser.add_argument("--repeat", type=int, default=30, help="samples per read timing")
    parser.add_argument("--dir", type=Path, default=None, help="work dir (default: a temp dir)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="koroku-bench-", dir=args.dir) as tmp:
        workdir = Path(tmp)
        append = bench_append(workdir, args.appends, args.rounds)
        start = time.perf_counter()
        built = build_big_log(workdir / "big.db", args.events)
        build_s = time.perf_counter() - start
        reads = bench_reads(workdir / "big.db", args.repeat)

    ratio_raw = append["ours_fts"] / append["raw_fts"]
    ratio_raw_no_fts = append["ours_no_fts"] / append["raw_no_fts"]
    ratio_fts = append["ours_fts"] / append["ours_no_fts"]
    ratio_raw_fts = append["raw_fts"] / append["raw_no_fts"]
    lines = [
        _row("benchmark", "value", "target"),
        _row("append ours (FTS), events/s", f"{append['ours_fts']:,.0f}"),
        _row("append ours (no FTS), events/s", f"{append['ours_no_fts']:,.0f}"),
        _row("append raw sqlite3 (FTS), events/s", f"{append['raw_fts']:,.0f}"),
        _row("append raw sqlite3 (no FTS), events/s", f"{append['raw_no_fts']:,.0f}"),
        _row("ratio ours/raw (both with FTS)", f"{ratio_raw:.2f}", ">= 0.5", ratio_raw >= 0.5),
        _row(
            "ratio ours/raw (both without FTS)",
            f"{ratio_raw_no_fts:.2f}",
            ">= 0.5",
            ratio_raw_no_fts >= 0.5,
        ),
        _row("ratio ours with FTS / without", f"{ratio_fts:.2f}", ">= 0.7", ratio_fts >= 0.7),
        _row("ratio raw with FTS / without", f"{ratio_raw_fts:.2f}"),
        _row(f"big log built ({args.events:,} rows), s", f"{build_s:.1f}"),
        _row("live tail after last compaction, events", f"{reads['live_tail_events']}"),
        _row(
            "startup: open + load_live, ms",
            f"{reads['startup_open_and_load_live_ms']:.2f}",
            "< 50",
            reads["startup_open_and_load_live_ms"] < 50,
        ),
        _row("load_live, ms", f"{reads['load_live_ms']:.2f}", "< 50", reads["load_live_ms"] < 50),
    ]
    for name in (
        "search_common_pair",
        "search_rare_pair",
        "search_disjoint_pair",
        "search_prefix_pair",
    ):
        ms = reads[name + "_ms"]
        label = (
            f"{name[7:].replace('_', ' ')} {reads[name + '_query']!r} ({reads[name + '_hits']}), ms"
        )
        lines.append(_row(label, f"{ms:.2f}", "< 50", ms < 50))
    for name in ("entries_newest_page_main", "entries_page_middle_all", "entries_compactions_main"):
        lines.append(_row(name.replace("_", " ") + ", ms", f"{reads[name + '_ms']:.2f}"))
    print("\n".join(lines))

    RESULTS.mkdir(exist_ok=True)
    report = {
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "args": {k: str(v) for k, v in vars(args).items()},
        "append_events_per_s": append,
        "ratios": {
            "ours_vs_raw_fts": ratio_raw,
            "ours_vs_raw_no_fts": ratio_raw_no_fts,
            "ours_fts_vs_no_fts": ratio_fts,
            "raw_fts_vs_no_fts": ratio_raw_fts,
        },
        "big_log": {**built, "build_s": build_s},
        "reads_ms": reads,
    }
    out = RESULTS / "bench_store.json"
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

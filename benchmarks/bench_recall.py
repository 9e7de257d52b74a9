"""Recall benchmarks: hybrid search and memory surfacing on a 1,000,000-event log, the disk
the vectors take, and backfill throughput against the fake Gemini server.

Run by hand (not by pytest):  uv run python benchmarks/bench_recall.py [--events N]
Prints a table and writes benchmarks/results/bench_recall.json. See benchmarks/README.md.
Vectors are synthetic (random unit vectors, quantised like real ones) and written directly,
not through the API; the embedding call itself is left out of the search timings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_store import build_big_log, pick_queries  # noqa: E402

from koroku_desktop.agent.embedding import BackgroundEmbedder  # noqa: E402
from koroku_desktop.agent.memories import MemorySurfacer  # noqa: E402
from koroku_desktop.agent.recall import MEANING_POOL, POOL, HybridSearch  # noqa: E402
from koroku_desktop.domain.events import MessageEvent  # noqa: E402
from koroku_desktop.domain.parts import TextPart  # noqa: E402
from koroku_desktop.llm.embeddings import DEFAULT_DIMENSIONS, GeminiEmbedder  # noqa: E402
from koroku_desktop.store import SqliteEventLog  # noqa: E402
from koroku_desktop.store.vectors.store import INDEX_FOLDER  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
MODEL = "gemini-embedding-001"


class FixedEmbedder:
    """An `Embedder` whose query vectors are random (no API call: it is not what we time)."""

    model = MODEL
    dimensions = DEFAULT_DIMENSIONS

    def __init__(self) -> None:
        self.rng = np.random.default_rng(3)

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector() for _ in texts]

    async def embed_query(self, text: str) -> list[float]:
        return self._vector()

    def _vector(self) -> list[float]:
        v = self.rng.standard_normal(self.dimensions).astype(np.float32)
        return list(map(float, v / np.linalg.norm(v)))


def _file_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
        return int(pages) * int(size)
    finally:
        conn.close()


def write_synthetic_vectors(path: Path, dims: int) -> dict[str, float]:
    """One random quantised vector per event, written straight into event_vectors."""
    SqliteEventLog(path).close()  # migrated
    before = _file_bytes(path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous = off")
    conn.execute(
        "INSERT OR IGNORE INTO vector_spaces (model, dims, done_seq, created_at)"
        " VALUES (?, ?, 0, ?)",
        (MODEL, dims, time.time()),
    )
    conn.commit()
    (space,) = conn.execute("SELECT id FROM vector_spaces WHERE model = ?", (MODEL,)).fetchone()
    seqs = [s for (s,) in conn.execute("SELECT seq FROM events ORDER BY seq")]
    rng = np.random.default_rng(5)
    started = time.perf_counter()
    for start in range(0, len(seqs), 50_000):
        block = seqs[start : start + 50_000]
        v = rng.standard_normal((len(block), dims)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        scales = np.abs(v).max(axis=1) / 127.0
        q = np.clip(np.rint(v / scales[:, None]), -127, 127).astype(np.int8)
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO event_vectors (space, seq, chunk, scale, vector) VALUES (?, ?, 0, ?, ?)",
            (
                (space, s, float(sc), row.tobytes())
                for s, sc, row in zip(block, scales, q, strict=True)
            ),
        )
        conn.execute("COMMIT")
    conn.execute("UPDATE vector_spaces SET done_seq = ? WHERE id = ?", (seqs[-1], space))
    conn.commit()
    conn.close()
    after = _file_bytes(path)
    return {
        "vectors": len(seqs),
        "write_s": time.perf_counter() - started,
        "bytes_per_million": (after - before) / len(seqs) * 1_000_000,
    }


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def bench_search(path: Path, queries: list[str]) -> dict[str, Any]:
    """Index load, hybrid search (median of 20) and surfacing latency (median of 20)."""
    log = SqliteEventLog(path)
    search = HybridSearch(log.vectors, FixedEmbedder())
    surfacer = MemorySurfacer(search)
    started = time.perf_counter()
    indexed = await asyncio.to_thread(log.vectors.catch_up_keywords, None)
    keyword_index_s = time.perf_counter() - started
    started = time.perf_counter()
    await search.nearest(await search.query_vector("warm up"), 1, None)
    load_s = time.perf_counter() - started
    hybrid, vector_only, keyword_only, cosines, surfacing = [], [], [], [], []
    by_query: dict[str, list[float]] = {}
    for n in range(20):
        query = queries[n % len(queries)]
        vector = await search.query_vector(query)
        t0 = time.perf_counter()
        result = await search.search(query, 10, vector=vector)
        hybrid.append(time.perf_counter() - t0)
        by_query.setdefault(query, []).append(hybrid[-1])
        assert result.mode == "hybrid"
        t0 = time.perf_counter()
        await asyncio.to_thread(
            log.vectors.nearest, MODEL, DEFAULT_DIMENSIONS, vector, MEANING_POOL, None
        )
        vector_only.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        seqs = await asyncio.to_thread(log.vectors.keyword, query, POOL, None)
        keyword_only.append(time.perf_counter() - t0)
        t0 = time.perf_counter()  # the fusion's read of every keyword hit's cosine by seq
        await asyncio.to_thread(log.vectors.similarities, MODEL, DEFAULT_DIMENSIONS, vector, seqs)
        cosines.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await surfacer.passages(vector, None, set(range(1, 200)))
        surfacing.append(time.perf_counter() - t0)
    log.close()
    return {
        "keyword_index_events": indexed,
        "keyword_index_s": keyword_index_s,
        "index_load_s": load_s,
        "hybrid_ms": _median_ms(hybrid),
        "vector_leg_ms": _median_ms(vector_only),
        "keyword_leg_ms": _median_ms(keyword_only),
        "keyword_cosines_ms": _median_ms(cosines),
        "surfacing_ms": _median_ms(surfacing),
        "hybrid_by_query_ms": {q: _median_ms(t) for q, t in by_query.items()},
    }


async def bench_backfill(workdir: Path, events: int) -> dict[str, float]:
    """Embed `events` fresh events through the real client against the fake server."""
    from tests.fakes.gemini_server import FakeGemini

    path = workdir / "backfill.db"
    log = SqliteEventLog(path)
    rng = random.Random(2)
    words = [
        "car",
        "garden",
        "invoice",
        "doctor",
        "birthday",
        "paint",
        "kitchen",
        "train",
        "budget",
        "recipe",
    ]
    for start in range(0, events, 1000):
        batch = [
            MessageEvent(
                role="user",
                parts=[TextPart(text=" ".join(rng.choice(words) for _ in range(30)))],
            )
            for _ in range(min(1000, events - start))
        ]
        log.append("default", batch)
    with FakeGemini() as fake:
        os.environ["GOOGLE_GEMINI_BASE_URL"] = fake.base_url
        embedder = GeminiEmbedder("bench-key", retry_attempts=1)
        worker = BackgroundEmbedder(log.vectors, embedder, batch_events=100)
        started = time.perf_counter()
        done = await worker.catch_up()
        elapsed = time.perf_counter() - started
        await embedder.aclose()
    log.close()
    return {"events": done, "seconds": elapsed, "events_per_s": done / elapsed}


def _child_env(home: Path, base_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps its bytecode cache
    env.update(
        KOROKU_HOME=str(home),
        GEMINI_API_KEY="bench-key",
        GOOGLE_GEMINI_BASE_URL=base_url,
        PYTHONPATH=str(ROOT),
    )
    return env


def _measured(
    command: list[str], env: dict[str, str], cwd: Path | None = None
) -> tuple[float, float]:
    """Run `command` in a new process (in `cwd`): (wall seconds, peak RSS in MB)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) not in (0, 1) or "keyword search only" in stderr:
        raise RuntimeError(f"{command[2:]} failed: {stderr}")
    return elapsed, usage.ru_maxrss / 1024


_LOAD_INDEX = """
import sqlite3, sys
from pathlib import Path
import numpy as np
from koroku_desktop.store.vectors.files import VectorFiles
from koroku_desktop.store.vectors.index import VectorIndex, unit
home, mapped = Path(sys.argv[1]), sys.argv[2] == "mapped"
conn = sqlite3.connect(f"file:{home / 'koroku.db'}?mode=ro", uri=True)
space, model, dims = conn.execute("SELECT id, model, dims FROM vector_spaces").fetchone()
folder = home / "vector-index" / f"space-{space}"
files = VectorFiles(folder, space, model, dims) if mapped else None
index = VectorIndex(space, dims, files, writable=False)
index.refresh(conn)
assert len(index) > 0 and (index.files is not None) == mapped
index.nearest(unit(list(np.random.default_rng(1).standard_normal(dims))), 30)
"""


def bench_cold_start(home: Path, runs: int = 3) -> dict[str, float]:
    """A new process loading the vector index and searching once: from SQLite as before (the
    in-memory build) vs mapping the persisted files; and the cold `koroku search` by meaning
    end to end (the first one builds the files), against a keyword-only one. Medians."""
    from tests.fakes.gemini_server import FakeGemini

    folder = home / INDEX_FOLDER
    python = [sys.executable, "-c", _LOAD_INDEX, str(home)]
    search = [sys.executable, "-m", "koroku_desktop", "search", "car", "paint"]
    samples: dict[str, list[tuple[float, float]]] = {}
    with FakeGemini() as fake:
        env = _child_env(home, fake.base_url)
        samples["keyword"] = [_measured([*search, "--keyword"], env) for _ in range(runs)]
        shutil.rmtree(folder, ignore_errors=True)
        samples["first_search"] = [_measured(search, env)]  # builds the files
        samples["search"] = [_measured(search, env) for _ in range(runs)]
        samples["before"] = [_measured([*python, "memory"], env) for _ in range(runs)]
        samples["after"] = [_measured([*python, "mapped"], env) for _ in range(runs)]
    results: dict[str, float] = {}
    for name, taken in samples.items():
        results[f"{name}_s"] = statistics.median(t for t, _ in taken)
        results[f"{name}_rss_mb"] = statistics.median(r for _, r in taken)
    results["speedup"] = results["before_s"] / results["after_s"]
    results["files_mb"] = sum(f.stat().st_size for f in folder.rglob("*")) / 1e6
    return results


def baseline_tree(ref: str, workdir: Path) -> Path:
    """The source of `ref` (today's main) unpacked beside the work, to run the same commands
    with the same interpreter and packages."""
    target = workdir / f"tree-{ref}"
    if not target.is_dir():
        target.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "koroku_desktop"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def bench_search_start(home: Path, baseline: Path, runs: int) -> dict[str, float]:
    """Cold `koroku search` on a log (wall time, median of `runs`): this tree against
    `baseline` (today's main) in the same run, by keywords and by meaning (the fake server
    answering the embedding), and a bare interpreter start for scale. The keyword leg's
    index is built first (timed apart: the app does it once per log). Each timed process is
    preceded by one untimed run of the same command (warm OS caches, bytecode written)."""
    from tests.fakes.gemini_server import FakeGemini

    words = ["search", "car", "paint"]
    results: dict[str, float] = {}
    with SqliteEventLog(home / "koroku.db") as log:  # once per log, as the app or an import
        started = time.perf_counter()
        results["keyword_index_events"] = log.vectors.catch_up_keywords(None)
        results["keyword_index_s"] = time.perf_counter() - started
    with FakeGemini() as fake:
        for name, tree in (("ours", ROOT), ("main", baseline)):
            env = _child_env(home, fake.base_url)
            env["PYTHONPATH"] = str(tree)
            for mode, extra in (("keyword", ["--keyword"]), ("hybrid", [])):
                command = [sys.executable, "-m", "koroku_desktop", *words, *extra]
                _measured(command, env, tree)  # `-m` finds the package in the cwd first
                taken = [_measured(command, env, tree) for _ in range(runs)]
                results[f"{name}_{mode}_s"] = statistics.median(t for t, _ in taken)
        bare = [_measured([sys.executable, "-c", "pass"], dict(os.environ)) for _ in range(runs)]
        results["python_s"] = statistics.median(t for t, _ in bare)
    for mode in ("keyword", "hybrid"):
        results[f"{mode}_ratio"] = results[f"ours_{mode}_s"] / results[f"main_{mode}_s"]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--backfill-events", type=int, default=3_000)
    parser.add_argument("--dir", type=Path, help="work dir (default: a temp dir)")
    parser.add_argument("--start-events", type=int, default=100_000, help="cold-start log")
    parser.add_argument("--start-runs", type=int, default=5)
    parser.add_argument("--baseline", default="main", help="git ref of today's version")
    parser.add_argument("--only-start", action="store_true", help="just the cold start")
    parser.add_argument(
        "--only-search",
        action="store_true",
        help="just the in-process search and surfacing, at --start-events and --events"
        " (each log built once in --dir, reused by later runs)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.dir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        start_home = built_home(workdir, args.start_events)
        if args.only_search:
            return only_search(workdir, [args.start_events, args.events])
        tree = baseline_tree(args.baseline, workdir)
        start = bench_search_start(start_home, tree, args.start_runs)
        print_start(args.start_events, args.baseline, start)
        if args.only_start:
            RESULTS.mkdir(exist_ok=True)
            (RESULTS / "bench_search_start.json").write_text(json.dumps(start, indent=2))
            return 0
        home = workdir / f"home-{args.events}"
        home.mkdir(exist_ok=True)
        path = home / "koroku.db"
        results: dict[str, Any] = {"events": args.events, "dimensions": DEFAULT_DIMENSIONS}
        if not path.exists():
            t0 = time.perf_counter()
            build_big_log(path, args.events)
            results["build_log_s"] = time.perf_counter() - t0
            results["vectors"] = write_synthetic_vectors(path, DEFAULT_DIMENSIONS)
        queries = [" ".join(q.split()[:2]) for q in pick_queries().values()]
        results["search_start"] = start
        results["cold_start"] = bench_cold_start(home)
        results["search"] = asyncio.run(bench_search(path, queries))
        results["backfill"] = asyncio.run(bench_backfill(workdir, args.backfill_events))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_recall.json").write_text(json.dumps(results, indent=2))
    s, b = results["search"], results["backfill"]
    v = results.get("vectors", {})
    print(f"events                         {args.events:>12,}")
    if v:
        print(f"vector disk per 1M events      {v['bytes_per_million'] / 1e6:>10.0f} MB")
    c = results["cold_start"]
    for label, key in (
        ("index load + 1 search, before ", "before"),
        ("index load + 1 search, after  ", "after"),
    ):
        print(f"{label} {c[key + '_s']:>10.2f} s   {c[key + '_rss_mb']:>6.0f} MB peak RSS")
    print(f"  speed-up (before / after)    {c['speedup']:>10.1f} x")
    for label, key in (
        ("cold `koroku search --keyword`", "keyword"),
        ("cold `koroku search`, 1st run ", "first_search"),
        ("cold `koroku search`, then    ", "search"),
    ):
        print(f"{label} {c[key + '_s']:>10.2f} s   {c[key + '_rss_mb']:>6.0f} MB peak RSS")
    print(f"  index files                  {c['files_mb']:>10.0f} MB")
    print(
        f"keyword index build            {s['keyword_index_s']:>10.1f} s"
        f"   ({s['keyword_index_events']:,} events, once per log)"
    )
    print(f"index load (first search)      {s['index_load_s']:>10.2f} s")
    print(f"hybrid search, median of 20    {s['hybrid_ms']:>10.1f} ms   (target < 100 ms)")
    print(f"  vector leg                   {s['vector_leg_ms']:>10.1f} ms")
    print(f"  keyword leg (BM25)           {s['keyword_leg_ms']:>10.1f} ms")
    print(f"  keyword hits' cosines        {s['keyword_cosines_ms']:>10.1f} ms")
    print(f"surfacing before a turn        {s['surfacing_ms']:>10.1f} ms   (target < 150 ms)")
    print(f"backfill vs the fake server    {b['events_per_s']:>10.0f} events/s")
    return 0


def built_home(workdir: Path, events: int) -> Path:
    """`workdir`'s home of a log of `events` events with their vectors, built when missing
    (a later run with the same --dir reuses it)."""
    home = workdir / f"home-{events}"
    if not (home / "koroku.db").exists():
        home.mkdir(exist_ok=True)
        build_big_log(home / "koroku.db", events)
        write_synthetic_vectors(home / "koroku.db", DEFAULT_DIMENSIONS)
    return home


def only_search(workdir: Path, sizes: list[int]) -> int:
    """The in-process search and surfacing at each size, in one run (the smaller is the
    same run's baseline); a log missing from `workdir` is built first."""
    queries = [" ".join(q.split()[:2]) for q in pick_queries().values()]
    found: dict[str, dict[str, Any]] = {}
    for events in dict.fromkeys(sizes):
        path = built_home(workdir, events) / "koroku.db"
        found[str(events)] = asyncio.run(bench_search(path, queries))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_recall_search.json").write_text(json.dumps(found, indent=2))
    print(f"{'events':<24}" + "".join(f"{int(n):>14,}" for n in found))
    for label, key, unit in (
        ("keyword index build", "keyword_index_s", "s"),
        ("index load (1st search)", "index_load_s", "s"),
        ("hybrid search", "hybrid_ms", "ms"),
        ("  vector leg", "vector_leg_ms", "ms"),
        ("  keyword leg (BM25)", "keyword_leg_ms", "ms"),
        ("  keyword hits' cosines", "keyword_cosines_ms", "ms"),
        ("surfacing", "surfacing_ms", "ms"),
    ):
        print(f"{label:<24}" + "".join(f"{r[key]:>11.1f} {unit:<2}" for r in found.values()))
    print("hybrid search by query (median of 5; a word in half the log is the slow one)")
    for query in queries:
        times = "".join(f"{r['hybrid_by_query_ms'][query]:>11.1f} ms" for r in found.values())
        print(f"  {query!r:<22}" + times)
    return 0


def print_start(events: int, ref: str, r: dict[str, float]) -> None:
    """The cold-start table: ours against `ref` in the same run."""
    print(
        f"keyword index build, once per log: {r['keyword_index_s']:.1f} s"
        f" ({int(r['keyword_index_events']):,} events)"
    )
    print(
        f"cold `koroku search`, {events:,} events (median; python -c pass: {r['python_s']:.2f} s)"
    )
    for mode in ("keyword", "hybrid"):
        print(
            f"  {mode:<8} ours {r[f'ours_{mode}_s']:>6.2f} s   {ref} {r[f'main_{mode}_s']:>6.2f} s"
            f"   ratio {r[f'{mode}_ratio']:.2f}"
        )


if __name__ == "__main__":
    raise SystemExit(main())

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
from koroku_desktop.agent.recall import HybridSearch  # noqa: E402
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


async def bench_search(path: Path, queries: list[str]) -> dict[str, float]:
    """Index load, hybrid search (median of 20) and surfacing latency (median of 20)."""
    log = SqliteEventLog(path)
    search = HybridSearch(log.vectors, FixedEmbedder())
    surfacer = MemorySurfacer(search)
    started = time.perf_counter()
    await search.nearest(await search.query_vector("warm up"), 1, None)
    load_s = time.perf_counter() - started
    hybrid, vector_only, keyword_only, surfacing = [], [], [], []
    for n in range(20):
        query = queries[n % len(queries)]
        vector = await search.query_vector(query)
        t0 = time.perf_counter()
        result = await search.search(query, 10, vector=vector)
        hybrid.append(time.perf_counter() - t0)
        assert result.mode == "hybrid"
        t0 = time.perf_counter()
        await asyncio.to_thread(log.vectors.nearest, MODEL, DEFAULT_DIMENSIONS, vector, 30, None)
        vector_only.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await asyncio.to_thread(log.vectors.keyword, query, 30, None)
        keyword_only.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await surfacer.passages(vector, None, set(range(1, 200)))
        surfacing.append(time.perf_counter() - t0)
    log.close()
    return {
        "index_load_s": load_s,
        "hybrid_ms": _median_ms(hybrid),
        "vector_leg_ms": _median_ms(vector_only),
        "keyword_leg_ms": _median_ms(keyword_only),
        "surfacing_ms": _median_ms(surfacing),
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


def _measured(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run `command` in a new process: (wall seconds, peak RSS in MB)."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--backfill-events", type=int, default=3_000)
    parser.add_argument("--dir", type=Path, help="work dir (default: a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.dir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
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
    print(f"index load (first search)      {s['index_load_s']:>10.2f} s")
    print(f"hybrid search, median of 20    {s['hybrid_ms']:>10.1f} ms   (target < 100 ms)")
    print(f"  vector leg                   {s['vector_leg_ms']:>10.1f} ms")
    print(f"  keyword leg (BM25)           {s['keyword_leg_ms']:>10.1f} ms")
    print(f"surfacing before a turn        {s['surfacing_ms']:>10.1f} ms   (target < 150 ms)")
    print(f"backfill vs the fake server    {b['events_per_s']:>10.0f} events/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

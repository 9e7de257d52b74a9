"""A search by meaning with the query's embedding call in it: the keyword leg run while the
query is embedded (as shipped) against after it (as before), in one process, alternating.

Run by hand (not by pytest):  uv run python benchmarks/bench_recall_overlap.py [--events N]
The log (and its synthetic vectors) is bench_recall.py's, built once in --dir. The query is
embedded by the real client against the fake Gemini server, after `--latency-ms` more (the
fake answers at once; the real service takes about a tenth of a second). "As before" holds
the keyword leg until the embedding has returned. Prints a table (medians, and whether both
found the same) and writes benchmarks/results/bench_recall_overlap.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_recall import RESULTS, built_home  # noqa: E402
from bench_store import pick_queries  # noqa: E402

from koroku_desktop.agent.ports import Embedder  # noqa: E402
from koroku_desktop.agent.recall import HybridSearch, RecallResult  # noqa: E402
from koroku_desktop.llm.embeddings import GeminiEmbedder  # noqa: E402
from koroku_desktop.store import SqliteEventLog  # noqa: E402


class SlowerEmbedder:
    """The real embedder, each query `latency` seconds later; sets `embedded` when done."""

    def __init__(self, inner: Embedder, latency: float, embedded: threading.Event) -> None:
        self.inner, self.latency, self.embedded = inner, latency, embedded
        self.model, self.dimensions = inner.model, inner.dimensions

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        await asyncio.sleep(self.latency)
        vector = await self.inner.embed_query(text)
        self.embedded.set()
        return vector


async def measure(path: Path, latencies: list[float], runs: int) -> list[dict[str, object]]:
    """Each query at each latency: median ms as before and as shipped, and if they agree."""
    from tests.fakes.gemini_server import FakeGemini

    queries = [" ".join(q.split()[:2]) for q in pick_queries().values()]
    log = SqliteEventLog(path)
    store = log.vectors
    keyword_scored = store.keyword_scored
    before = {"on": False}
    embedded = threading.Event()

    def keyword_leg(
        query: str, limit: int, below_seq: int | None = None
    ) -> list[tuple[int, float]]:
        if before["on"]:
            embedded.wait(30)  # as before: after the embedding
        return keyword_scored(query, limit, below_seq)

    store.keyword_scored = keyword_leg  # type: ignore[method-assign]
    rows: list[dict[str, object]] = []
    with FakeGemini() as fake:
        os.environ["GOOGLE_GEMINI_BASE_URL"] = fake.base_url
        inner = GeminiEmbedder("bench-key", retry_attempts=1)
        for latency in latencies:
            embedder = SlowerEmbedder(inner, latency, embedded)
            search = HybridSearch(store, embedder, clock=lambda: 2_000_000_000.0)
            await search.search("warm up", 10)  # the client connected, the index loaded
            for query in queries:
                taken: dict[str, list[float]] = {"before": [], "shipped": []}
                found: dict[str, RecallResult] = {}
                for _ in range(runs):
                    for name in ("before", "shipped"):
                        before["on"] = name == "before"
                        embedded.clear()
                        started = time.perf_counter()
                        found[name] = await search.search(query, 10)
                        taken[name].append(time.perf_counter() - started)
                rows.append(
                    {
                        "latency_ms": latency * 1000,
                        "query": query,
                        "before_ms": statistics.median(taken["before"]) * 1000,
                        "shipped_ms": statistics.median(taken["shipped"]) * 1000,
                        "same_results": found["before"] == found["shipped"],
                    }
                )
        await inner.aclose()
    log.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, help="work dir (default: a temp dir)")
    parser.add_argument("--runs", type=int, default=7, help="of each, per query and latency")
    parser.add_argument(
        "--latency-ms", type=float, nargs="+", default=[0.0, 150.0], help="added per query"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.dir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        path = built_home(workdir, args.events) / "koroku.db"
        latencies = [ms / 1000 for ms in args.latency_ms]
        rows = asyncio.run(measure(path, latencies, args.runs))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_recall_overlap.json").write_text(json.dumps(rows, indent=2))
    print(f"search by meaning, {args.events:,} events (median of {args.runs})")
    for row in rows:
        ratio = float(row["shipped_ms"]) / float(row["before_ms"])  # type: ignore[arg-type]
        print(
            f"  +{row['latency_ms']:>4.0f} ms  {row['query']!r:<24}"
            f" before {row['before_ms']:>7.1f} ms  shipped {row['shipped_ms']:>7.1f} ms"
            f"  ratio {ratio:.2f}  same {row['same_results']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

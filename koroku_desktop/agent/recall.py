"""HybridSearch: one search used everywhere — BM25 and meaning, fused, with a recency prior.

The keyword leg is FTS5 ranked by BM25 over any of the query's words; the meaning leg is
the query's embedding against the log's vectors. The two rankings are fused by reciprocal
rank fusion (each list adds 1 / (RRF_K + rank)), which needs no score calibration between
BM25 and cosine, plus a small prior for recent events (at most a quarter of a first place,
halving every RECENCY_HALF_LIFE_DAYS). Without an embedder, or when the embedding call
fails, the search is keyword-only and says so.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from koroku_desktop.agent.ports import Embedder, MemoryVectorStore, RecallStore
from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.domain.recall import MemoryMatch, RecallHit, VectorMatch

log = logging.getLogger(__name__)

RRF_K = 60
RECENCY_WEIGHT = 0.25 / (RRF_K + 1)
RECENCY_HALF_LIFE_DAYS = 30.0
MIN_SIMILARITY = 0.55
"""Vector matches below this cosine are not results at all (unrelated text)."""
CANDIDATES = 3
"""Each leg fetches `CANDIDATES * limit` results to fuse."""

SearchMode = Literal["hybrid", "keyword"]

Finder = Callable[[str, int], Awaitable[tuple[list[SearchHit], str | None, list[MemoryMatch]]]]
"""`find(query, limit)`: the hits of the one search, a note when it fell back to keywords,
and the pieces of memory files close in meaning."""


@dataclass(frozen=True)
class RecallResult:
    """The hits of one search, how it searched, and why it fell back to keywords (if so)."""

    hits: list[RecallHit]
    mode: SearchMode
    note: str | None = None
    memory: list[MemoryMatch] = field(default_factory=list)
    """Pieces of the memory files close in meaning (none in a keyword-only search)."""


@dataclass
class HybridSearch:
    """Searches the log by keywords and by meaning; `embedder` None means keyword-only.
    With `memory`, a search by meaning also returns the closest pieces of the memory files."""

    store: RecallStore
    embedder: Embedder | None = None
    clock: Callable[[], float] = field(default=time.time)
    min_similarity: float = MIN_SIMILARITY
    memory: MemoryVectorStore | None = None

    async def query_vector(self, query: str) -> list[float]:
        """The query's embedding (raises `ModelError`; `LookupError` with no embedder)."""
        if self.embedder is None:
            raise LookupError("no embedder")
        return await self.embedder.embed_query(query)

    async def search(
        self,
        query: str,
        limit: int = 10,
        *,
        below_seq: int | None = None,
        keyword_only: bool = False,
        vector: list[float] | None = None,
    ) -> RecallResult:
        """The best `limit` events for `query`; events from `below_seq` on are left out."""
        wanted = max(1, limit) * CANDIDATES
        keyword_task = asyncio.to_thread(self.store.keyword, query, wanted, below_seq)
        note: str | None = None
        matches: list[VectorMatch] = []
        memory: list[MemoryMatch] = []
        if keyword_only:
            note = "keyword search only (as asked)"
        elif self.embedder is None:
            note = "keyword search only: no Gemini API key for search by meaning"
        else:
            try:
                if vector is None:
                    vector = await self.query_vector(query)
                matches = await self.nearest(vector, wanted, below_seq)
                memory = await self.memory_nearest(vector, limit)
            except ModelError as exc:
                if exc.kind == "auth" and "No Gemini API key" in exc.message:
                    note = "keyword search only: no Gemini API key for search by meaning"
                else:
                    note = f"keyword search only: search by meaning failed ({exc})"
                    log.warning("search by meaning failed: %s", exc)
        keyword = await keyword_task
        hits = await self._fuse(keyword, matches, limit)
        return RecallResult(hits, "keyword" if note else "hybrid", note, memory)

    async def warm(self) -> None:
        """Bring the vector index up to date now, off the loop: map its persisted files and
        append what is new (built from the table the first time: seconds for a million
        events, which the first search would pay otherwise)."""
        if self.embedder is not None:
            dims = self.embedder.dimensions
            await self.nearest([1.0] + [0.0] * (dims - 1), 1, None)

    async def nearest(
        self, vector: list[float], limit: int, below_seq: int | None
    ) -> list[VectorMatch]:
        """Vector matches above the similarity floor (off the event loop)."""
        if self.embedder is None:
            return []
        model, dims = self.embedder.model, self.embedder.dimensions
        found = await asyncio.to_thread(self.store.nearest, model, dims, vector, limit, below_seq)
        return [m for m in found if m.similarity >= self.min_similarity]

    async def memory_nearest(self, vector: list[float], limit: int) -> list[MemoryMatch]:
        """Memory-file pieces above the similarity floor (off the event loop)."""
        if self.embedder is None or self.memory is None:
            return []
        model, dims = self.embedder.model, self.embedder.dimensions
        found = await asyncio.to_thread(self.memory.nearest, model, dims, vector, limit)
        return [m for m in found if m.similarity >= self.min_similarity]

    async def _fuse(
        self, keyword: list[SearchHit], matches: list[VectorMatch], limit: int
    ) -> list[RecallHit]:
        scores: dict[int, float] = {}
        for rank, hit in enumerate(keyword):
            scores[hit.seq] = scores.get(hit.seq, 0.0) + 1.0 / (RRF_K + rank + 1)
        for rank, match in enumerate(matches):
            scores[match.seq] = scores.get(match.seq, 0.0) + 1.0 / (RRF_K + rank + 1)
        by_seq = {h.seq: h for h in keyword}
        missing = [m.seq for m in matches if m.seq not in by_seq]
        if missing:
            by_seq.update(await asyncio.to_thread(self.store.hits, missing))
        now = self.clock()
        for seq, hit in by_seq.items():
            age_days = max(0.0, now - hit.created_at) / 86_400
            scores[seq] = scores.get(seq, 0.0) + RECENCY_WEIGHT * 0.5 ** (
                age_days / RECENCY_HALF_LIFE_DAYS
            )
        keyword_rank = {h.seq: n + 1 for n, h in enumerate(keyword)}
        similarity = {m.seq: m.similarity for m in matches}
        ranked = sorted((s for s in scores if s in by_seq), key=lambda s: -scores[s])
        return [
            RecallHit(by_seq[s], scores[s], keyword_rank.get(s), similarity.get(s))
            for s in ranked[:limit]
        ]

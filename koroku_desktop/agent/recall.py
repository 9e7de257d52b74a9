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

RRF_K = 20
"""Reciprocal rank fusion's constant: a list's place n adds weight / (RRF_K + n). Low enough
that the keyword leg's first places stay apart (at the usual 60 they differ by less than a
weak meaning leg adds, and the fused top 5 fell below the keyword leg's on LoCoMo)."""
RECENCY_WEIGHT = 0.25 / (RRF_K + 1)
RECENCY_HALF_LIFE_DAYS = 30.0
MIN_SIMILARITY = 0.55
"""Vector matches below this cosine are not results at all (unrelated text); lowered to the
floor calibrated on the log's own vectors when that is lower (see `HybridSearch.nearest`)."""
MEANING_WEIGHT = 0.15
"""The meaning leg's weight in the fusion (the keyword leg's is 1): enough to lift what both
legs found and to answer what no keyword matches, too little to reorder strong keyword hits
on a weak embedding model's say-so (on LoCoMo with a small model, 0.5 fell below the
keyword leg alone)."""
POOL = 200
"""Candidates the keyword leg fetches, whatever the limit (the most results a search returns)."""
MEANING_POOL = 50
"""Candidates the meaning leg fetches, whatever the limit: below its 50th place a match adds
less than a keyword's 700th place (and more would double the exact scoring's reads)."""
MAX_QUERY_CHARS = 4_000
"""A longer query is cut here (about 1,000 tokens: within the embedding model's 2,048)."""

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
    catch_up: Callable[[], Awaitable[int]] | None = None
    """Embeds a bounded batch of pending events (never raises); run while a query is being
    embedded, so that a search by meaning, a surfacing or a `recall` finds what any process
    wrote."""

    async def query_vector(self, query: str) -> list[float]:
        """The query's embedding (raises `ModelError`; `LookupError` with no embedder), with
        the log's pending events caught up meanwhile."""
        if self.embedder is None:
            raise LookupError("no embedder")
        if self.catch_up is None:
            return await self.embedder.embed_query(query)
        vector, _ = await asyncio.gather(self.embedder.embed_query(query), self.catch_up())
        return vector

    async def search(
        self,
        query: str,
        limit: int = 10,
        *,
        below_seq: int | None = None,
        keyword_only: bool = False,
        vector: list[float] | None = None,
    ) -> RecallResult:
        """The best `limit` events for `query`; events from `below_seq` on are left out.

        Each leg fetches the same `POOL` candidates whatever `limit` is, so `limit` only cuts
        the fused ranking. A query longer than `MAX_QUERY_CHARS` is cut there (said in the
        note); an empty one, or one of only stop words, finds by meaning alone."""
        query, clipped = clip_query(query)
        limit = max(1, min(limit, POOL))
        keyword_task = asyncio.to_thread(self.store.keyword, query, POOL, below_seq)
        note: str | None = None
        matches: list[VectorMatch] = []
        memory: list[MemoryMatch] = []
        if keyword_only:
            note = "keyword search only (as asked)"
        elif self.embedder is None:
            note = "keyword search only: no Gemini API key for search by meaning"
        elif not query.strip():
            note = "nothing to search for"
        else:
            try:
                if vector is None:
                    vector = await self.query_vector(query)
                matches = await self.nearest(vector, MEANING_POOL, below_seq)
                memory = await self.memory_nearest(vector, limit)
            except ModelError as exc:
                if exc.kind == "auth" and "No Gemini API key" in exc.message:
                    note = "keyword search only: no Gemini API key for search by meaning"
                else:
                    note = f"keyword search only: search by meaning failed ({exc})"
                    log.warning("search by meaning failed: %s", exc)
        keyword = await keyword_task
        hits = await self._fuse(query, keyword, matches, limit)
        if clipped:
            cut = f"the query was cut to its first {MAX_QUERY_CHARS:,} characters"
            note = f"{note}; {cut}" if note else cut
        mode: SearchMode = "keyword" if note and note.startswith("keyword") else "hybrid"
        return RecallResult(hits, mode, note, memory)

    async def warm(self) -> None:
        """Bring the keyword leg's index and the vector index up to date now, off the loop
        (built from the log the first time: seconds for a million events, which the first
        searches would pay otherwise)."""
        await asyncio.to_thread(self.store.catch_up_keywords, None)
        if self.embedder is not None:
            dims = self.embedder.dimensions
            await self.nearest([1.0] + [0.0] * (dims - 1), 1, None)

    async def nearest(
        self, vector: list[float], limit: int, below_seq: int | None
    ) -> list[VectorMatch]:
        """Vector matches above the similarity floor (off the event loop): the lower of
        `min_similarity` and the floor calibrated on the log's own vectors for this query
        (a small model's related texts score far below Gemini's). A vector of the wrong
        size from the service is a `ModelError`, as any failure of the service."""
        if self.embedder is None:
            return []
        model, dims = self.embedder.model, self.embedder.dimensions
        if len(vector) != dims:
            raise ModelError(
                "unknown",
                f"the embedding service returned {len(vector)} dimensions, not {dims} ({model})",
            )
        found, floor = await asyncio.to_thread(self._nearest, model, dims, vector, limit, below_seq)
        return [m for m in found if m.similarity >= floor]

    def _nearest(
        self, model: str, dims: int, vector: list[float], limit: int, below_seq: int | None
    ) -> tuple[list[VectorMatch], float]:
        found = self.store.nearest(model, dims, vector, limit, below_seq)
        calibrated = self.store.similarity_floor(model, dims, vector) if found else None
        floor = self.min_similarity if calibrated is None else min(self.min_similarity, calibrated)
        return found, floor

    async def memory_nearest(self, vector: list[float], limit: int) -> list[MemoryMatch]:
        """Memory-file pieces above the similarity floor (off the event loop)."""
        if self.embedder is None or self.memory is None:
            return []
        model, dims = self.embedder.model, self.embedder.dimensions
        found = await asyncio.to_thread(self.memory.nearest, model, dims, vector, limit)
        return [m for m in found if m.similarity >= self.min_similarity]

    async def _fuse(
        self, query: str, keyword: list[int], matches: list[VectorMatch], limit: int
    ) -> list[RecallHit]:
        """Weighted reciprocal rank fusion: the keyword leg counts in full, the meaning leg
        `MEANING_WEIGHT`, so the fused ranking keeps the keyword leg's order, lifts what both
        legs found, and adds what only the meaning leg found after them."""
        scores: dict[int, float] = {}
        for rank, seq in enumerate(keyword):
            scores[seq] = scores.get(seq, 0.0) + 1.0 / (RRF_K + rank + 1)
        for rank, match in enumerate(matches):
            scores[match.seq] = scores.get(match.seq, 0.0) + MEANING_WEIGHT / (RRF_K + rank + 1)
        if not scores:
            return []
        created = await asyncio.to_thread(self.store.created, list(scores))
        now = self.clock()
        for seq, at in created.items():
            age_days = max(0.0, now - at) / 86_400
            scores[seq] += RECENCY_WEIGHT * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
        ranked = sorted((s for s in scores if s in created), key=lambda s: (-scores[s], -s))
        top = ranked[:limit]
        by_seq = await asyncio.to_thread(self.store.found, top, query)
        keyword_rank = {seq: n + 1 for n, seq in enumerate(keyword)}
        similarity = {m.seq: m.similarity for m in matches}
        return [
            RecallHit(by_seq[s], scores[s], keyword_rank.get(s), similarity.get(s))
            for s in top
            if s in by_seq
        ]


def clip_query(query: str) -> tuple[str, bool]:
    """`query` cut to `MAX_QUERY_CHARS` at a word break, and whether it was cut."""
    if len(query) <= MAX_QUERY_CHARS:
        return query, False
    cut = query.rfind(" ", 0, MAX_QUERY_CHARS)
    return query[: cut if cut > 0 else MAX_QUERY_CHARS], True

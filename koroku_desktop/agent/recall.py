"""HybridSearch: one search used everywhere — BM25 and meaning, fused, with a recency prior.

The keyword leg is FTS5 ranked by BM25 over any of the query's words; the meaning leg is
the query's embedding against the log's vectors. They are fused by their scores, each
calibrated on the query's own candidates: every candidate (the keyword leg's `POOL` and the
meaning leg's matches above the similarity floor) scores the z-score of its BM25 relevance
among them plus `SIMILARITY_WEIGHT` times the z-score of its cosine with the query, plus a
small prior for recent events. So a strong keyword hit keeps its place, and close keyword
scores are ordered by meaning. Without an embedder, or when the embedding call fails, the
search is keyword-only and says so.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from koroku_desktop.agent.ports import Embedder, MemoryVectorStore, RecallStore
from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.domain.recall import MemoryMatch, RecallHit, VectorMatch

log = logging.getLogger(__name__)

SIMILARITY_WEIGHT = 0.2
"""The meaning leg's weight in the fusion: a cosine one standard deviation above the
candidates' mean adds a fifth of what a BM25 relevance one deviation above theirs adds.
Enough to reorder keyword hits of about the same strength, too little to bury a strong
keyword hit on a weak embedding model's say-so (on LoCoMo with a small model, 0.15 to 0.3
gave the same recall; 0.4 and up fell towards the keyword leg alone)."""
RECENCY_WEIGHT = 0.25
"""A just-written event's prior, in the same standard deviations (halving every
`RECENCY_HALF_LIFE_DAYS`)."""
RECENCY_HALF_LIFE_DAYS = 30.0
MIN_SIMILARITY = 0.55
"""Vector matches below this cosine are not results of their own (unrelated text); lowered
to the floor calibrated on the log's own vectors when that is lower (see
`HybridSearch.nearest`). A keyword hit's cosine counts in the fusion whatever it is."""
POOL = 200
"""Candidates the keyword leg fetches, whatever the limit (the most results a search returns)."""
MEANING_POOL = 50
"""Candidates the meaning leg fetches, whatever the limit (the similarity floor usually
keeps far fewer)."""
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


class FusionStore(RecallStore, Protocol):
    """What the fusion reads besides `RecallStore` (store/vectors/store.py)."""

    def keyword_scored(
        self, query: str, limit: int, below_seq: int | None = None
    ) -> list[tuple[int, float]]:
        """(seq, BM25 relevance: higher is better) of the best keyword matches, best first."""
        ...

    def similarities(
        self, model: str, dimensions: int, query: list[float], seqs: list[int]
    ) -> dict[int, float]:
        """The cosine of these events' best chunks with `query` (those embedded)."""
        ...


@dataclass
class HybridSearch:
    """Searches the log by keywords and by meaning; `embedder` None means keyword-only.
    With `memory`, a search by meaning also returns the closest pieces of the memory files."""

    store: FusionStore
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
        # Started now (a task, not a bare coroutine): the keyword leg runs in a worker thread
        # while the query is embedded, so a search by meaning costs the longer, not the sum.
        keyword_task = asyncio.ensure_future(
            asyncio.to_thread(self.store.keyword_scored, query, POOL, below_seq)
        )
        note: str | None = None
        used: list[float] | None = None
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
                used = vector
            except ModelError as exc:
                if exc.kind == "auth" and "No Gemini API key" in exc.message:
                    note = "keyword search only: no Gemini API key for search by meaning"
                else:
                    note = f"keyword search only: search by meaning failed ({exc})"
                    log.warning("search by meaning failed: %s", exc)
            except BaseException:
                # Cancelled, or failed otherwise: the keyword leg is not waited for, and its
                # outcome is not left unread (its thread finishes on its own).
                keyword_task.cancel()
                raise
        keyword = await keyword_task
        cosines = await self._cosines(used, keyword, matches)
        hits = await self._fuse(query, keyword, matches, cosines, limit)
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

    async def _cosines(
        self,
        vector: list[float] | None,
        keyword: list[tuple[int, float]],
        matches: list[VectorMatch],
    ) -> dict[int, float]:
        """The query's cosine with each candidate that has a vector (none without `vector`):
        the meaning leg's matches, and the keyword leg's hits read by seq. Benchmark variants
        subclass it to fuse with other cosines (it sees both legs, as `_fuse` does)."""
        if vector is None or self.embedder is None:
            return {}
        found = {m.seq: m.similarity for m in matches}
        missing = [seq for seq, _ in keyword if seq not in found]
        if missing:
            model, dims = self.embedder.model, self.embedder.dimensions
            read = self.store.similarities
            found.update(await asyncio.to_thread(read, model, dims, vector, missing))
        return found

    async def _fuse(
        self,
        query: str,
        keyword: list[tuple[int, float]],
        matches: list[VectorMatch],
        cosines: dict[int, float],
        limit: int,
    ) -> list[RecallHit]:
        """The candidates ranked by `candidate_scores` plus the recency prior."""
        scores = candidate_scores(keyword, matches, cosines)
        if not scores:
            return []
        created = await asyncio.to_thread(self.store.created, list(scores))
        now = self.clock()
        for seq, at in created.items():
            age_days = max(0.0, now - at) / 86_400
            scores[seq] += RECENCY_WEIGHT * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
        self._adjust(query, scores, created)
        ranked = sorted((s for s in scores if s in created), key=lambda s: (-scores[s], -s))
        top = ranked[:limit]
        by_seq = await asyncio.to_thread(self.store.found, top, query)
        keyword_rank = {seq: n + 1 for n, (seq, _) in enumerate(keyword)}
        similarity = {m.seq: m.similarity for m in matches}
        return [
            RecallHit(by_seq[s], scores[s], keyword_rank.get(s), similarity.get(s))
            for s in top
            if s in by_seq
        ]

    def _adjust(self, query: str, scores: dict[int, float], created: dict[int, float]) -> None:
        """A last change to the fused scores before ranking: none here (benchmark variants
        subclass it to try a rescoring with everything else as shipped)."""


def candidate_scores(
    keyword: list[tuple[int, float]], matches: list[VectorMatch], cosines: dict[int, float]
) -> dict[int, float]:
    """`fused_scores` of the keyword leg's hits and the meaning leg's matches; a match found
    by meaning alone counts a BM25 relevance of 0 (what a unit sharing no word with the
    query has; one past the keyword leg's pool has little more)."""
    relevance = dict(keyword)
    for match in matches:
        relevance.setdefault(match.seq, 0.0)
    return fused_scores(relevance, cosines)


def fused_scores(relevance: dict[int, float], cosines: dict[int, float]) -> dict[int, float]:
    """Each candidate's z-score of BM25 relevance among the candidates, plus
    `SIMILARITY_WEIGHT` times the z-score of its cosine among those with a vector (a
    candidate without one, not embedded yet, counts their mean). Calibrated on the query's
    own candidates, so neither BM25's scale (which grows with the query's words and the
    log) nor the embedding model's (a small model's related texts score 0.4, Gemini's
    unrelated ones 0.5) needs a constant."""
    by_relevance = z_scores(relevance)
    by_meaning = z_scores({s: c for s, c in cosines.items() if s in relevance})
    return {s: z + SIMILARITY_WEIGHT * by_meaning.get(s, 0.0) for s, z in by_relevance.items()}


def z_scores(values: dict[int, float]) -> dict[int, float]:
    """Each value's distance from their mean in standard deviations (0 when all equal)."""
    if not values:
        return {}
    mean = sum(values.values()) / len(values)
    deviation = math.sqrt(sum((v - mean) ** 2 for v in values.values()) / len(values))
    if deviation <= 1e-12:
        return dict.fromkeys(values, 0.0)
    return {key: (value - mean) / deviation for key, value in values.items()}


def clip_query(query: str) -> tuple[str, bool]:
    """`query` cut to `MAX_QUERY_CHARS` at a word break, and whether it was cut."""
    if len(query) <= MAX_QUERY_CHARS:
        return query, False
    cut = query.rfind(" ", 0, MAX_QUERY_CHARS)
    return query[: cut if cut > 0 else MAX_QUERY_CHARS], True

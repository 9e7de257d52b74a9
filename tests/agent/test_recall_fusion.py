"""The hybrid search's fusion by scores, over a real SQLite log, the real google-genai client
and the fake server: meaning orders keyword hits of about the same strength (even below the
similarity floor), an event not embedded yet counts the candidates' mean, a match found by
meaning alone counts no keyword relevance, `limit` only cuts, and the z-scores themselves."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from koroku_desktop.agent.recall import (
    SIMILARITY_WEIGHT,
    HybridSearch,
    candidate_scores,
    fused_scores,
    z_scores,
)
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.domain.recall import VectorMatch
from koroku_desktop.store import SqliteEventLog
from tests.agent.test_recall_by_meaning import Setup, setup
from tests.fakes.gemini_server import FakeGemini

__all__ = ["setup"]

QUERY = "tide pool visit"
ALPHA, BRAVO, CHARLIE = (f"tide pool visit {name}" for name in ("alpha", "bravo", "charlie"))
"""Equally strong keyword hits (each said in a conversation of its own, so no unit has the
others as its context)."""


def _say(log: SqliteEventLog, conversation: str, text: str) -> int:
    event = MessageEvent(role="user", origin="person", parts=[TextPart(text=text)])
    (stored,) = log.append(conversation, [event])
    return stored.seq


async def _two_hits(
    setup: Setup, fake_gemini: FakeGemini, cosines: dict[str, float]
) -> tuple[int, int]:
    """ALPHA and BRAVO said and embedded with these cosines to the query: their seqs."""
    alpha = _say(setup.log, "c1", ALPHA)
    bravo = _say(setup.log, "c2", BRAVO)
    fake_gemini.embedder = _embed_by_cosine(cosines)
    await setup.background.catch_up()
    return alpha, bravo


def _embed_by_cosine(
    cosines: dict[str, float],
) -> Callable[[list[str], int, str], list[list[float]]]:
    """An embedder whose query is the first axis and each listed text has the given cosine
    with it (unlisted texts: 0)."""

    def embed(batch: list[str], dims: int, model: str) -> list[list[float]]:
        vectors = []
        for text in batch:
            c = 1.0 if text == QUERY else cosines.get(text, 0.0)
            vectors.append([c, math.sqrt(max(0.0, 1.0 - c * c))] + [0.0] * (dims - 2))
        return vectors

    return embed


async def test_meaning_orders_keyword_hits_of_the_same_strength(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    alpha, bravo = await _two_hits(setup, fake_gemini, {ALPHA: 0.95})
    search = HybridSearch(setup.log.vectors, setup.embedder)

    (_, first), (_, second) = setup.log.vectors.keyword_scored(QUERY, 5)
    assert first == pytest.approx(second)  # a tie for the keyword leg
    keyword = await search.search(QUERY, 5, keyword_only=True)
    assert [h.hit.seq for h in keyword.hits] == [bravo, alpha]  # the newer first
    fused = await search.search(QUERY, 5)
    assert fused.mode == "hybrid"
    assert [h.hit.seq for h in fused.hits] == [alpha, bravo]
    assert fused.hits[0].similarity == pytest.approx(0.95, abs=0.02)  # found by meaning too
    assert fused.hits[1].similarity is None  # under the floor: not found by meaning


async def test_a_keyword_hits_similarity_counts_even_under_the_floor(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    alpha, bravo = await _two_hits(setup, fake_gemini, {ALPHA: 0.4, BRAVO: 0.1})
    search = HybridSearch(setup.log.vectors, setup.embedder, min_similarity=0.9)

    assert await search.nearest([1.0] + [0.0] * 767, 5, None) == []  # nothing above it
    fused = await search.search(QUERY, 5)
    assert [h.hit.seq for h in fused.hits] == [alpha, bravo]
    assert [h.similarity for h in fused.hits] == [None, None]


async def test_an_event_not_embedded_yet_counts_the_candidates_mean_similarity(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    alpha, bravo = await _two_hits(setup, fake_gemini, {ALPHA: 0.9, BRAVO: 0.1})
    charlie = _say(setup.log, "c3", CHARLIE)  # written after the catch-up: no vector yet
    model, dims = setup.embedder.model, setup.embedder.dimensions
    assert set(
        setup.log.vectors.similarities(
            model, dims, [1.0] + [0.0] * (dims - 1), [alpha, bravo, charlie]
        )
    ) == {alpha, bravo}

    fused = await HybridSearch(setup.log.vectors, setup.embedder).search(QUERY, 5)
    assert [h.hit.seq for h in fused.hits] == [alpha, charlie, bravo]


async def test_the_limit_only_cuts_the_fused_ranking(setup: Setup, fake_gemini: FakeGemini) -> None:
    texts = [f"tide pool visit {n} " + "note " * (n % 4) for n in range(12)]
    for n, text in enumerate(texts):
        _say(setup.log, f"c{n}", text)
    _say(setup.log, "other", "a crimson automobile")
    fake_gemini.embedder = _embed_by_cosine(
        {t: (0.3 + 0.05 * ((n * 5) % 12)) for n, t in enumerate(texts)}
    )
    await setup.background.catch_up()
    search = HybridSearch(setup.log.vectors, setup.embedder)

    full = [h.hit.seq for h in (await search.search(QUERY, 20)).hits]
    assert len(full) == 12
    for limit in (1, 3, 7):
        assert [h.hit.seq for h in (await search.search(QUERY, limit)).hits] == full[:limit]


async def test_a_meaning_only_match_comes_after_strong_keyword_hits(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    hits = [_say(setup.log, f"c{n}", f"tide pool visit {n}") for n in range(3)]
    weak = _say(setup.log, "w", "a pool")  # one of the words, in a long-ish unit
    meaning = _say(setup.log, "m", "rock shore outing")
    fake_gemini.embedder = _embed_by_cosine({"rock shore outing": 0.97})
    await setup.background.catch_up()

    fused = await HybridSearch(setup.log.vectors, setup.embedder).search(QUERY, 10)
    order = [h.hit.seq for h in fused.hits]
    assert set(order[:3]) == set(hits)
    assert meaning in order and weak in order
    found = fused.hits[order.index(meaning)]
    assert found.keyword_rank is None and found.similarity == pytest.approx(0.97, abs=0.02)


async def test_a_lone_keyword_hit_stays_ahead_of_a_closer_meaning_only_match(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    hit = _say(setup.log, "c1", ALPHA)
    meaning = _say(setup.log, "m", "rock shore outing")
    fake_gemini.embedder = _embed_by_cosine({ALPHA: 0.6, "rock shore outing": 0.97})
    await setup.background.catch_up()

    fused = await HybridSearch(setup.log.vectors, setup.embedder).search(QUERY, 10)
    assert [h.hit.seq for h in fused.hits] == [hit, meaning]


def test_z_scores_and_the_fused_score() -> None:
    assert z_scores({}) == {}
    assert z_scores({1: 3.0, 2: 3.0}) == {1: 0.0, 2: 0.0}
    assert z_scores({1: 1.0, 2: 3.0}) == {1: -1.0, 2: 1.0}
    fused = fused_scores({1: 1.0, 2: 3.0, 3: 2.0}, {1: 0.9, 2: 0.1, 9: 0.5})
    # 3 has no vector: its meaning counts 0 (the mean); 9 is no candidate: ignored.
    assert fused[3] == pytest.approx(0.0)
    spread = math.sqrt(2 / 3)
    assert fused[1] == pytest.approx(-1 / spread + SIMILARITY_WEIGHT)
    assert fused[2] == pytest.approx(1 / spread - SIMILARITY_WEIGHT)


def test_a_match_found_by_meaning_alone_counts_a_relevance_of_zero() -> None:
    keyword = [(1, 4.0), (2, 2.0)]
    matches = [VectorMatch(seq=2, similarity=0.5), VectorMatch(seq=3, similarity=0.9)]
    cosines = {1: 0.1, 2: 0.5, 3: 0.9}
    assert candidate_scores(keyword, matches, cosines) == fused_scores(
        {1: 4.0, 2: 2.0, 3: 0.0}, cosines
    )
    assert candidate_scores([], [], {}) == {}

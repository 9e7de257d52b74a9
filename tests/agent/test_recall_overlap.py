"""A search by meaning runs its keyword leg while the query is being embedded (the longer of
the two, not their sum), and finds exactly what it found with the legs one after the other.
Over a real SQLite log; the embedder is in-process (what is tested is the order of the legs,
not the wire)."""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.agent.embedding import BackgroundEmbedder
from koroku_desktop.agent.recall import HybridSearch
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog

DIMS = 16
SAID = [
    "my car is painted crimson",
    "the car needs new tyres before winter",
    "the dentist appointment moved to friday",
    "buy oat milk and bread",
    "the dog barks at the red van",
    "paint the fence red this weekend",
]


def words_vector(text: str) -> list[float]:
    """A bag of hashed words (stable across runs): texts sharing words are close."""
    vector = [0.0] * DIMS
    for word in re.findall(r"\w+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMS] += 1.0
    return vector if any(vector) else [1.0] + [0.0] * (DIMS - 1)


class WordEmbedder:
    """An `Embedder` by hashed words; `before_query` runs before a query's vector is given."""

    model = "hashed-words"
    dimensions = DIMS

    def __init__(self) -> None:
        self.before_query: Callable[[], Awaitable[None]] | None = None

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [words_vector(t) for t in texts]

    async def embed_query(self, text: str) -> list[float]:
        if self.before_query is not None:
            await self.before_query()
        return words_vector(text)


async def test_the_keyword_leg_runs_while_the_query_is_embedded_with_the_same_results(
    koroku_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = SqliteEventLog(koroku_home / "koroku.db")
    try:
        log.append(
            "default",
            [MessageEvent(role="user", origin="person", parts=[TextPart(text=t)]) for t in SAID],
        )
        embedder = WordEmbedder()
        assert await BackgroundEmbedder(log.vectors, embedder).catch_up() == len(SAID)
        search = HybridSearch(log.vectors, embedder, clock=lambda: 2_000_000_000.0)
        store = log.vectors
        keyword_scored = store.keyword_scored
        keyword_done, embedded = threading.Event(), threading.Event()
        legs = {"one after the other": False}

        def keyword_leg(
            query: str, limit: int, below_seq: int | None = None
        ) -> list[tuple[int, float]]:
            if legs["one after the other"]:
                assert embedded.wait(10)  # as the search did before: after the embedding
            found = keyword_scored(query, limit, below_seq)
            keyword_done.set()
            return found

        monkeypatch.setattr(store, "keyword_scored", keyword_leg)
        seen: list[bool] = []

        async def after_the_keyword_leg() -> None:  # the embedding answers once it is done
            seen.append(await asyncio.to_thread(keyword_done.wait, 5))

        embedder.before_query = after_the_keyword_leg
        overlapped = await search.search("red car paint", 5)
        assert seen == [True]  # the keyword leg ended while the query was being embedded

        async def before_the_keyword_leg() -> None:
            embedded.set()

        legs["one after the other"] = True
        embedder.before_query = before_the_keyword_leg
        one_after_the_other = await search.search("red car paint", 5)
        assert overlapped == one_after_the_other
        assert overlapped.mode == "hybrid" and len(overlapped.hits) >= 3
    finally:
        log.close()


async def test_a_search_failing_while_the_query_is_embedded_leaves_no_keyword_leg_behind(
    koroku_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error other than the service's (or a cancel) passes through, and the keyword leg
    started beside it is cancelled, not left as a task whose outcome nobody reads."""
    log = SqliteEventLog(koroku_home / "koroku.db")
    try:
        said = MessageEvent(role="user", origin="person", parts=[TextPart(text="red car")])
        log.append("default", [said])
        embedder = WordEmbedder()

        async def broken() -> None:
            raise RuntimeError("the embedder broke")

        embedder.before_query = broken
        started: list[asyncio.Future[list[tuple[int, float]]]] = []
        ensure_future = asyncio.ensure_future

        def recorded(awaitable: Awaitable[list[tuple[int, float]]]) -> asyncio.Future[Any]:
            started.append(ensure_future(awaitable))
            return started[-1]

        monkeypatch.setattr("koroku_desktop.agent.recall.asyncio.ensure_future", recorded)
        search = HybridSearch(log.vectors, embedder, clock=lambda: 2_000_000_000.0)
        with pytest.raises(RuntimeError, match="embedder broke"):
            await search.search("red car paint", 5)
        assert len(started) == 1
        with pytest.raises(asyncio.CancelledError):
            await started[0]
    finally:
        log.close()

"""Recall by meaning over a real SQLite log, the real google-genai client and the fake server:
search finds synonyms, the recall tool never returns the running turn, outages and model
changes are caught up."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.agent.embedding import BackgroundEmbedder
from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.agent.recall import HybridSearch
from koroku_desktop.app.recall_wiring import recall_tool_search
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.llm.embeddings import GeminiEmbedder
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.vectors.embed_text import CHUNK_CHARS
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.fakes.fixtures import TEST_API_KEY
from tests.fakes.gemini_server import FakeGemini

CAR = "my car is painted crimson"
OTHER = ["the dentist appointment moved to friday", "buy oat milk and bread", "the dog barks"]


class _Yes:
    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(allowed=True)


@dataclass
class Setup:
    log: SqliteEventLog
    embedder: GeminiEmbedder
    search: HybridSearch
    background: BackgroundEmbedder
    agent: Agent


@pytest.fixture
async def setup(fake_gemini: FakeGemini, koroku_home: Path) -> AsyncIterator[Setup]:
    log = SqliteEventLog(koroku_home / "koroku.db")
    embedder = GeminiEmbedder(TEST_API_KEY, retry_attempts=1, timeout_s=10)
    model = GeminiChatModel(TEST_API_KEY, timeout_s=20, retry_attempts=1)
    options = AgentOptions("gemini-test", 10, koroku_home, koroku_home)
    agent = Agent(log, model, ToolRegistry(None), ApprovalPolicy(), _Yes(), options)
    search = HybridSearch(log.vectors, embedder)
    agent.recall = recall_tool_search(search, agent)
    background = BackgroundEmbedder(log.vectors, embedder, batch_events=2, retry_after_s=3600)
    yield Setup(log, embedder, search, background, agent)
    await background.stop()
    await embedder.aclose()
    await model.aclose()
    log.close()


def _say(log: SqliteEventLog, *texts: str) -> list[int]:
    events = [MessageEvent(role="user", origin="person", parts=[TextPart(text=t)]) for t in texts]
    return [s.seq for s in log.append("default", events)]


async def test_search_finds_by_meaning_what_shares_no_word(setup: Setup) -> None:
    (car,) = _say(setup.log, CAR)
    _say(setup.log, *OTHER)
    assert setup.log.search("automobile colour") == []  # no shared word
    assert await setup.background.catch_up() == 4

    result = await setup.search.search("automobile colour", 3)
    assert result.mode == "hybrid"
    assert [h.hit.seq for h in result.hits][:1] == [car]
    assert result.hits[0].similarity is not None and result.hits[0].keyword_rank is None
    assert "crimson" in result.hits[0].hit.snippet

    keyword = await setup.search.search("automobile colour", 3, keyword_only=True)
    assert keyword.mode == "keyword" and keyword.hits == []


async def test_keywords_and_meaning_are_fused(setup: Setup) -> None:
    both, _meaning = _say(setup.log, "the red car needs new tyres", "crimson automobile")
    _say(setup.log, *OTHER)
    await setup.background.catch_up()
    result = await setup.search.search("red car", 5)
    top = result.hits[0]
    assert top.hit.seq == both
    assert top.keyword_rank == 1 and top.similarity is not None


async def test_the_recall_tool_never_returns_the_running_turns_own_question(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    agent = setup.agent
    fake_gemini.reply_text("Noted.")
    assert (await agent.run_turn(CAR)).ok
    await agent.clear()
    await setup.background.catch_up()
    fake_gemini.reply_calls(("recall", {"query": "what colour is my automobile?"}))
    fake_gemini.reply_text("It is crimson.")
    assert (await agent.run_turn("what colour is my automobile?")).ok

    responses = [
        p
        for m in agent.view.messages
        if isinstance(m.event, MessageEvent)
        for p in m.event.function_responses
    ]
    (response,) = responses
    results = [r for r in response.response["results"] if r["source"] == "conversation"]
    snippets = json.dumps(results)
    assert "crimson" in snippets
    assert all(r["seq"] < (agent.turn_from_seq or 0) for r in results)
    assert "what colour is my automobile" not in snippets


async def test_results_already_in_the_live_context_are_marked(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    agent = setup.agent
    fake_gemini.reply_text("Noted.")
    assert (await agent.run_turn(CAR)).ok
    await setup.background.catch_up()
    fake_gemini.reply_calls(("recall", {"query": "automobile colour"}))
    fake_gemini.reply_text("Crimson.")
    assert (await agent.run_turn("automobile colour?")).ok
    (response,) = [
        p
        for m in agent.view.messages
        if isinstance(m.event, MessageEvent)
        for p in m.event.function_responses
    ]
    (car,) = [r for r in response.response["results"] if "crimson" in r.get("snippet", "")]
    assert car["already_in_context"] is True


async def test_an_embedding_outage_keeps_turns_and_keywords_working_then_backfills(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    fake_gemini.embedding_outage = 503
    fake_gemini.reply_text("Noted.")
    assert (await setup.agent.run_turn(CAR)).ok
    _say(setup.log, *OTHER)
    assert await setup.background.catch_up() == 0
    assert setup.background.last_error is not None
    assert [h.seq for h in setup.log.search("crimson")]  # keywords still work
    down = await setup.search.search("automobile colour", 3)
    assert down.mode == "keyword" and down.note and "failed" in down.note
    status = setup.log.vectors.status(setup.embedder.model, setup.embedder.dimensions)
    assert status.pending_events == 5 and status.vectors == 0

    fake_gemini.embedding_outage = 0  # dropped connections: still down
    assert await setup.background.catch_up() == 0

    fake_gemini.embedding_outage = None
    assert await setup.background.catch_up() == 5
    assert setup.background.last_error is None
    status = setup.log.vectors.status(setup.embedder.model, setup.embedder.dimensions)
    assert status.complete and status.vectors >= 5
    back = await setup.search.search("automobile colour", 3)
    assert back.mode == "hybrid" and "crimson" in back.hits[0].hit.snippet


async def test_a_model_change_re_embeds_the_log_and_drops_the_old_vectors(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    _say(setup.log, CAR, *OTHER)
    await setup.background.catch_up()
    old = setup.embedder.model
    setup.embedder.model = "gemini-embedding-002"
    status = setup.log.vectors.status(setup.embedder.model, setup.embedder.dimensions)
    assert status.pending_events == 4 and status.vectors == 0

    assert await setup.background.catch_up() == 4
    models = {r.model for r in fake_gemini.embed_requests()}
    assert models == {old, "gemini-embedding-002"}
    assert setup.log.vectors.status(old, setup.embedder.dimensions).vectors == 0
    result = await setup.search.search("automobile colour", 1)
    assert "crimson" in result.hits[0].hit.snippet


async def test_long_texts_are_embedded_in_chunks(setup: Setup, fake_gemini: FakeGemini) -> None:
    words = [f"word{n}" for n in range(1500)]
    _say(setup.log, " ".join(words))
    await setup.background.catch_up()
    status = setup.log.vectors.status(setup.embedder.model, setup.embedder.dimensions)
    assert status.vectors > 1
    texts = [
        p["parts"][0]["text"]
        for r in fake_gemini.embed_requests()
        for p in (q["content"] for q in r.body["requests"])
    ]
    assert len(texts) == status.vectors
    assert all(len(t) <= CHUNK_CHARS for t in texts)
    assert texts[0].startswith("word0 ") and texts[-1].endswith("word1499")
    # Each chunk starts inside the previous one (they overlap), so no sentence is cut off.
    for before, after in itertools.pairwise(texts):
        assert after.split()[0] in before.split()


async def test_a_weak_meaning_match_lifts_a_keyword_hit_without_taking_the_first_place(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    texts = [f"flamingo report {n}: " + "flamingo " * (4 - n) + "notes" for n in range(5)]
    seqs = _say(setup.log, *texts)
    keyword = setup.log.vectors.keyword("flamingo report", 10)
    assert sorted(keyword) == seqs  # five keyword hits in some order
    last = texts[seqs.index(keyword[-1])]

    def embed(batch: list[str], dims: int, model: str) -> list[list[float]]:
        # Only the keyword leg's last hit is close in meaning to the query.
        near = [1.0] + [0.0] * (dims - 1)
        return [
            near if t in (last, "flamingo report") else [0.0, 1.0] + [0.0] * (dims - 2)
            for t in batch
        ]

    fake_gemini.embedder = embed
    await setup.background.catch_up()
    result = await setup.search.search("flamingo report", 5)
    fused = [h.hit.seq for h in result.hits]
    assert result.mode == "hybrid" and sorted(fused) == seqs
    # The keyword leg's first place stays first; the one meaning agrees with moves up.
    assert fused[0] == keyword[0]
    assert fused.index(keyword[-1]) < len(keyword) - 1
    assert result.hits[fused.index(keyword[-1])].similarity == pytest.approx(1.0, abs=0.02)


async def test_a_kick_during_a_catch_up_is_not_lost(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An event written after a running catch-up read "nothing pending" (an import, another
    process's turn) is embedded once its kick comes, not at some later turn."""
    background, store = setup.background, setup.log.vectors
    found_nothing, go_on = asyncio.Event(), threading.Event()
    real_pending = store.pending

    def pending(*args: Any) -> Any:
        batch = real_pending(*args)
        if batch.events == 0 and not go_on.is_set():
            loop.call_soon_threadsafe(found_nothing.set)
            go_on.wait(10)  # the catch-up is still running while the event is written
        return batch

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(store, "pending", pending)
    background.kick()
    await found_nothing.wait()
    _say(setup.log, "the orchard's pears ripen in late September")
    background.kick()  # while the first catch-up still runs
    go_on.set()
    assert background._task is not None
    await background._task
    model, dims = setup.embedder.model, setup.embedder.dimensions
    assert store.pending(model, dims).events == 0  # the pears were embedded by that kick


async def test_a_kick_during_an_outage_pause_tries_the_service_again(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    """A failure schedules a retry an hour later (here); a kick meanwhile (the next turn)
    still tries at once, so a service that came back is used without waiting the hour."""
    fake_gemini.embedding_outage = 503
    _say(setup.log, *OTHER)
    assert await setup.background.catch_up() == 0
    assert setup.background.paused
    fake_gemini.embedding_outage = None
    setup.background.kick()
    assert setup.background._task is not None
    assert await setup.background._task == len(OTHER)
    assert setup.background.last_error is None

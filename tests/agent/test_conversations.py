"""Several conversations, one memory, through the composition root: a real SQLite file,
`FakeChatModel` handed to `build_runtime`. Each conversation has its own live context,
compaction and lease; the facts about the user and the memory files span them all."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import datetime

import pytest

from koroku_desktop.agent.memory import memory_file
from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.agent.supersede import last_turn
from koroku_desktop.agent.titles import TITLE_INSTRUCTION
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.domain.conversations import AmbiguousConversation, UnknownConversation
from koroku_desktop.domain.events import ConversationEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest
from koroku_desktop.domain.parts import visible_text
from tests.fakes.chat_model import FakeChatModel


def said(request: ModelRequest) -> str:
    return " ".join(visible_text(c.parts) for c in request.contents)


def replies(titles: list[str | ModelError]) -> FakeChatModel:
    """Turns answered `re: ...`, summaries `SUMMARY of ...`, titles from `titles`."""

    def reply(request: ModelRequest) -> str | ModelError:
        if request.system_instruction == TITLE_INSTRUCTION:
            return titles.pop(0) if titles else "Spare"
        last = visible_text(request.contents[-1].parts)
        if request.system_instruction == SUMMARIZER_INSTRUCTION:
            return "SUMMARY of " + ("zebras" if "zebra" in last else "oceans")
        return f"re: {last[-40:]}"

    return FakeChatModel(reply)


async def test_an_existing_log_opens_as_one_conversation_and_new_ones_are_apart(
    open_runtime: Callable[..., Runtime],
) -> None:
    model = replies(["Zebra talk"])
    first = open_runtime(model)
    assert first.agent.conversation_id == "default"
    assert (await first.agent.run_turn("hello from before conversations")).ok
    book = first.conversations
    assert book is not None
    (only,) = book.listed()
    assert (only.id, only.title, only.messages, only.created) == (
        "default",
        "Conversation",
        2,
        False,
    )

    zebra = book.create()
    await first.switch_to(zebra)
    assert (await first.agent.run_turn("tell me about zebras")).ok
    assert first.titler is not None
    await first.titler.settle()
    assert "before conversations" not in said(model.requests[-2])  # the turn, before the title
    assert book.find(zebra.id[:6]).title == "Zebra talk"
    # A new runtime opens the most recently active conversation.
    again = open_runtime(model)
    assert (again.agent.conversation_id, again.agent.conversation_title) == (zebra.id, "Zebra talk")
    await again.agent.load()
    assert [m.role for m in again.agent.view.message_events()] == ["user", "model"]
    other = open_runtime(model, conversation="Conversation")
    assert other.agent.conversation_id == "default"


async def test_compaction_and_regenerate_are_per_conversation_and_memory_is_one_file_a_day(
    open_runtime: Callable[..., Runtime],
) -> None:
    model = replies([])
    runtime = open_runtime(model)
    book = runtime.conversations
    assert book is not None
    zebras, oceans = book.create("Zebras"), book.create("Oceans")
    for conv, topic in ((zebras, "zebra"), (oceans, "ocean")):
        await runtime.switch_to(conv)
        for n in range(3):
            assert (await runtime.agent.run_turn(f"{topic} question {n}")).ok
        compacted = await runtime.compactor.compact_now(runtime.agent)
        assert compacted is not None, runtime.compactor.last_problem
    # Each summary folds its own conversation only.
    await runtime.switch_to(zebras)
    view = await runtime.agent.load()
    assert view.summary is not None and view.summary.summary == "SUMMARY of zebras"
    text = memory_file(runtime.paths.home, datetime.now()).read_text(encoding="utf-8")
    assert re.search(
        rf"^\[\d\d:\d\d\] in Zebras \({zebras.id[:8]}\): SUMMARY of zebras$", text, re.M
    )
    assert re.search(
        rf"^\[\d\d:\d\d\] in Oceans \({oceans.id[:8]}\): SUMMARY of oceans$", text, re.M
    )
    assert len(list((runtime.paths.home / "memory").glob("*.md"))) == 1

    # Regenerating in Zebras leaves Oceans alone.
    assert (await runtime.agent.run_turn("zebra stripes?")).ok
    turn = last_turn(runtime.agent.view)
    assert turn is not None
    assert (await runtime.agent.run_turn(None, replacing=turn.turn_id)).ok
    ocean_events = [
        e
        for e in runtime.log.entries(oceans.id, limit=500)
        if isinstance(e, StoredEvent) and not isinstance(e.event, ConversationEvent)
    ]
    assert {e.event.kind for e in ocean_events} == {"message", "compaction", "memory_edit"}
    assert all(
        "zebra" not in visible_text(e.event.parts)
        for e in ocean_events
        if isinstance(e.event, MessageEvent)
    )


async def test_facts_span_conversations_and_a_title_failure_is_retried(
    open_runtime: Callable[..., Runtime],
) -> None:
    model = replies([ModelError("unavailable", "down for now"), "Travel plans"])
    runtime = open_runtime(model)
    assert runtime.facts is not None and runtime.conversations is not None
    runtime.facts.remember("default", "home city", "Lives in Oslo.")
    trip = runtime.conversations.create()
    await runtime.switch_to(trip)
    assert (await runtime.agent.run_turn("plan a trip")).ok
    assert model.requests[0].system_instruction.endswith("home city: Lives in Oslo.")
    assert runtime.titler is not None
    await runtime.titler.settle()
    assert runtime.conversations.find(trip.id).title == "New conversation"
    assert "down for now" in (runtime.titler.last_problem or "")
    assert (await runtime.agent.run_turn("by train")).ok
    await runtime.titler.settle()
    assert runtime.conversations.find(trip.id).title == "Travel plans"
    # A person's rename is never replaced by the model's title.
    runtime.conversations.rename(trip.id, "Mine")
    runtime.conversations.name(trip.id, "The model's")
    assert runtime.conversations.find(trip.id).title == "Mine"


async def test_bad_names_are_refused_and_a_terminal_switches_only_between_turns(
    open_runtime: Callable[..., Runtime],
) -> None:
    gate, asked = asyncio.Event(), asyncio.Event()

    async def slow(request: ModelRequest) -> str:
        asked.set()
        await gate.wait()
        return "done"

    runtime = open_runtime(FakeChatModel(slow), front_end="chat")
    book = runtime.conversations
    assert book is not None
    a, _b = book.create("Same"), book.create("Same")
    with pytest.raises(AmbiguousConversation):
        open_runtime(replies([]), conversation="Same")
    with pytest.raises(UnknownConversation):
        open_runtime(replies([]), conversation="missing")
    turn = asyncio.ensure_future(runtime.agent.run_turn("slow"))
    await asked.wait()  # the turn holds the conversation
    with pytest.raises(RuntimeError, match="turn is running"):
        await runtime.switch_to(a)
    gate.set()
    assert (await turn).ok
    agent = runtime.agent
    await runtime.switch_to(a)
    assert runtime.agent is agent and agent.conversation_id == a.id  # one agent, rebound


async def test_the_app_switches_during_a_turn_which_goes_on_in_its_own_conversation(
    open_runtime: Callable[..., Runtime],
) -> None:
    gate, asked = asyncio.Event(), asyncio.Event()

    async def answer(request: ModelRequest) -> str:
        said = visible_text(request.contents[-1].parts)
        if said.endswith("slow"):
            asked.set()
            await gate.wait()
        return "re " + said.rsplit("]", 1)[-1].strip()

    runtime = open_runtime(FakeChatModel(answer))
    pool = runtime.pool
    assert pool is not None and runtime.conversations is not None
    first = runtime.agent
    other = runtime.conversations.create("Other")
    turn = asyncio.ensure_future(first.run_turn("slow"))
    await asked.wait()
    await runtime.switch_to(other)
    assert runtime.agent is not first and runtime.agent.conversation_id == other.id
    assert pool.agent_of(first.conversation_id) is first  # still working behind
    # A turn in the shown conversation runs while the other waits for its model.
    assert (await runtime.agent.run_turn("quick")).text == "re quick"
    assert first.busy
    gate.set()
    assert (await turn).text == "re slow"
    assert not first.busy and pool.agent_of(first.conversation_id) is first  # kept, idle
    pool.keep_idle = 0
    pool.release_idle()
    assert pool.agent_of(first.conversation_id) is None  # let go
    firsts = [e.event for e in runtime.log.entries(first.conversation_id)]
    others = [e.event for e in runtime.log.entries(other.id)]
    assert [visible_text(e.parts) for e in firsts if isinstance(e, MessageEvent)][-1] == "re slow"
    assert "re slow" not in [visible_text(e.parts) for e in others if isinstance(e, MessageEvent)]

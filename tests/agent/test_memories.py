"""Memories that surface unasked: related past passages ride with a new user turn, stored in
the log and sent to the model; an unrelated question, or one already in context, gets none."""

from __future__ import annotations

import pytest

from koroku_desktop.agent.memories import MemorySurfacer
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.remembered import REMEMBERED_HEADER, parse_remembered, said_text
from koroku_desktop.render.blocks import RememberedBlock, TextBlock
from koroku_desktop.render.fold import entry_view
from tests.agent.test_recall_by_meaning import CAR, OTHER, Setup, _say, setup
from tests.fakes.gemini_server import FakeGemini

__all__ = ["setup"]


@pytest.fixture
async def mem(setup: Setup, fake_gemini: FakeGemini) -> Setup:
    setup.agent.memories = MemorySurfacer(setup.search)
    fake_gemini.reply_text("Noted.")
    assert (await setup.agent.run_turn(CAR)).ok
    _say(setup.log, *OTHER)
    await setup.background.catch_up()
    return setup


def _last_user(s: Setup) -> MessageEvent:
    for stored in reversed(s.agent.view.messages):
        if isinstance(stored.event, MessageEvent) and stored.event.is_user_turn:
            return stored.event
    raise AssertionError("no user turn")


async def test_a_related_question_after_clear_brings_the_passage_along(
    mem: Setup, fake_gemini: FakeGemini
) -> None:
    car_seq = mem.agent.view.messages[0].seq
    await mem.agent.clear()
    assert (await mem.agent.run_turn("what colour is my automobile?")).ok

    user = _last_user(mem)
    passages = parse_remembered(user.parts[-1])
    assert passages is not None and [p.seq for p in passages] == [car_seq]
    assert "crimson" in passages[0].text
    assert said_text(user.parts) == "what colour is my automobile?"  # what quick-ask matches
    # Sent to the model as part of the turn, clearly marked as past data.
    sent = fake_gemini.generate_requests()[-1].contents[-1]["parts"]
    assert sent[-1]["text"].startswith(REMEMBERED_HEADER) and "crimson" in sent[-1]["text"]
    # Every front end sees it as its own block, under the person's text.
    stored = mem.agent.view.messages[-2]
    blocks = entry_view(stored).blocks
    assert blocks[0] == TextBlock("what colour is my automobile?")
    assert isinstance(blocks[1], RememberedBlock) and blocks[1].passages[0].seq == car_seq


async def test_an_unrelated_question_gets_none(mem: Setup) -> None:
    await mem.agent.clear()
    assert (await mem.agent.run_turn("how do I bake sourdough?")).ok
    assert all(parse_remembered(p) is None for p in _last_user(mem).parts)


async def test_what_the_model_already_sees_is_not_surfaced_again(mem: Setup) -> None:
    assert (await mem.agent.run_turn("what colour is my automobile?")).ok  # CAR is live
    assert all(parse_remembered(p) is None for p in _last_user(mem).parts)


async def test_the_setting_turns_it_off(mem: Setup) -> None:
    await mem.agent.clear()
    mem.agent.options.surface_memories = False
    assert (await mem.agent.run_turn("what colour is my automobile?")).ok
    assert all(parse_remembered(p) is None for p in _last_user(mem).parts)


async def test_an_embedding_outage_means_no_memories_and_a_normal_turn(
    mem: Setup, fake_gemini: FakeGemini
) -> None:
    await mem.agent.clear()
    fake_gemini.embedding_outage = 503
    result = await mem.agent.run_turn("what colour is my automobile?")
    assert result.ok
    assert all(parse_remembered(p) is None for p in _last_user(mem).parts)


async def test_a_passage_from_another_conversation_says_which_one(mem: Setup) -> None:
    """Surfacing spans every conversation; once there are several, each passage names the
    conversation it comes from."""
    from koroku_desktop.agent.conversations import ConversationBook, read_titles

    book = ConversationBook(mem.log)
    mem.agent.memories = MemorySurfacer(mem.search, titles=lambda: read_titles(mem.log))
    car_seq = mem.agent.view.messages[0].seq
    cars = book.create("Car questions")
    mem.agent.switch_to(cars.id, cars.title)
    assert (await mem.agent.run_turn("what colour is my automobile?")).ok
    passages = parse_remembered(_last_user(mem).parts[-1])
    assert passages is not None and [p.seq for p in passages] == [car_seq]
    assert passages[0].who == "user in Conversation"  # the log's first conversation


async def test_the_first_turn_of_a_new_log_asks_for_no_query_embedding(
    setup: Setup, fake_gemini: FakeGemini
) -> None:
    """Nothing in the log could surface yet: no embedding request delays the first answer."""
    setup.agent.memories = MemorySurfacer(setup.search)
    fake_gemini.reply_text("Hello.")
    assert (await setup.agent.run_turn("hello there")).ok
    assert fake_gemini.embed_requests() == []
    # The next turn has a passage to look for, so it embeds its question again.
    assert (await setup.agent.run_turn("and again")).ok
    assert len(fake_gemini.embed_requests()) == 1

"""Dismissing a remembered passage: an event in the log that keeps the passage from surfacing
again in the conversation (after clears too), while what was sent stays as it was."""

from __future__ import annotations

import pytest

from koroku_desktop.agent.dismissal import dismiss_remembered
from koroku_desktop.agent.memories import dismissed_passages
from koroku_desktop.domain.events import MessageEvent, RememberedDismissedEvent, StoredEvent
from koroku_desktop.domain.remembered import parse_remembered
from koroku_desktop.render.fold import entry_view
from koroku_desktop.render.markdown import blocks_markdown
from koroku_desktop.store import SqliteEventLog
from tests.agent.test_memories import mem
from tests.agent.test_recall_by_meaning import Setup, setup
from tests.fakes.gemini_server import FakeGemini

__all__ = ["mem", "setup"]


def _surfaced(s: Setup) -> list[tuple[int, list[int]]]:
    """(message seq, passage seqs) of every user turn that carried remembered passages."""
    found = []
    for entry in s.log.entries("default", limit=1000):
        if isinstance(entry, StoredEvent) and isinstance(entry.event, MessageEvent):
            for part in entry.event.parts:
                passages = parse_remembered(part)
                if passages is not None:
                    found.append((entry.seq, [p.seq for p in passages]))
    return found


async def _ask_after_clear(s: Setup) -> None:
    await s.agent.clear()
    assert (await s.agent.run_turn("what colour is my automobile?")).ok


async def test_a_dismissed_passage_is_not_surfaced_again_in_the_conversation(
    mem: Setup, fake_gemini: FakeGemini
) -> None:
    car = mem.agent.view.messages[0].seq
    await _ask_after_clear(mem)
    [(surfaced, passages)] = _surfaced(mem)
    assert passages == [car]
    sent_before = fake_gemini.generate_requests()[-1].contents
    payload_before = mem.log.entries(after_seq=surfaced - 1, limit=1)[0]

    stored = await dismiss_remembered(mem.agent, car, surfaced)

    event = stored.event
    assert isinstance(event, RememberedDismissedEvent)
    assert (event.passage_seq, event.surfaced_seq) == (car, surfaced)
    passage_entry = mem.log.entries(after_seq=car - 1, limit=1)[0]
    assert isinstance(passage_entry, StoredEvent)
    assert event.passage_event_id == passage_entry.event_id
    assert event.surfaced_turn_id == payload_before.turn_id  # type: ignore[union-attr]
    assert dismissed_passages(mem.log, "default") == {car}
    assert dismissed_passages(mem.log, "elsewhere") == set()  # the rule is per conversation
    # What was sent is unchanged: the message still carries the passage.
    assert mem.log.entries(after_seq=surfaced - 1, limit=1)[0] == payload_before
    assert mem.agent.view.last_seq == stored.seq  # folded here

    # The next turn resends the surfaced message as it was sent (the projection skips the
    # dismissal): the request stays reproducible.
    assert (await mem.agent.run_turn("and is it still shiny?")).ok
    assert fake_gemini.generate_requests()[-1].contents[: len(sent_before)] == sent_before
    assert _surfaced(mem) == [(surfaced, [car])]

    await _ask_after_clear(mem)  # a later related question, after another clear
    assert _surfaced(mem) == [(surfaced, [car])]  # nothing new surfaced


async def test_other_passages_still_surface(mem: Setup, fake_gemini: FakeGemini) -> None:
    car = mem.agent.view.messages[0].seq
    await _ask_after_clear(mem)
    [(surfaced, _)] = _surfaced(mem)
    await dismiss_remembered(mem.agent, car, surfaced)
    fake_gemini.reply_text("Noted.")
    assert (await mem.agent.run_turn("my automobile is a crimson estate")).ok
    await mem.background.catch_up()
    await _ask_after_clear(mem)
    latest = _surfaced(mem)[-1][1]
    assert car not in latest and latest  # the newer car message still surfaces


async def test_a_second_store_on_the_file_sees_the_dismissal(mem: Setup) -> None:
    car = mem.agent.view.messages[0].seq
    await _ask_after_clear(mem)
    [(surfaced, _)] = _surfaced(mem)
    await dismiss_remembered(mem.agent, car, surfaced)
    path = mem.log.path
    other = SqliteEventLog(path)
    try:
        assert dismissed_passages(other, "default") == {car}
    finally:
        other.close()


async def test_dismissing_what_a_message_did_not_carry_is_refused(mem: Setup) -> None:
    car = mem.agent.view.messages[0].seq
    with pytest.raises(ValueError, match="did not surface"):
        await dismiss_remembered(mem.agent, car, car)  # a plain message
    with pytest.raises(ValueError, match="not in this conversation"):
        await dismiss_remembered(mem.agent, car, 10_000)
    assert dismissed_passages(mem.log, "default") == set()


def test_every_surface_shows_the_dismissal() -> None:
    stored = StoredEvent(7, "default", 0.0, RememberedDismissedEvent(passage_seq=3, surfaced_seq=5))
    view = entry_view(stored)
    assert view.speaker == "marker" and view.marker is not None
    assert view.blocks == (view.marker,) and view.marker.kind == "remembered_dismissed"
    assert view.marker.title == "Remembered #3 dismissed (surfaced with #5): not relevant"
    assert "Remembered #3 dismissed" in blocks_markdown(view.blocks, 100, "x")


async def test_a_dismissal_merged_from_another_device_counts_by_event_id(
    mem: Setup, fake_gemini: FakeGemini
) -> None:
    car = mem.agent.view.messages[0].seq
    car_entry = mem.log.entries(after_seq=car - 1, limit=1)[0]
    assert isinstance(car_entry, StoredEvent)
    # Written elsewhere: its seqs are that log's, only the event id names the passage here.
    elsewhere = RememberedDismissedEvent(
        passage_seq=car + 1000, surfaced_seq=car + 1001, passage_event_id=car_entry.event_id
    )
    mem.log.append("default", [elsewhere])
    seqs_of = mem.log.vectors.seqs_of_events
    assert dismissed_passages(mem.log, "default", seqs_of) == {car}
    assert dismissed_passages(mem.log, "default") == {car + 1000}  # without ids: the seq
    await mem.agent.catch_up()
    await _ask_after_clear(mem)
    assert _surfaced(mem) == []

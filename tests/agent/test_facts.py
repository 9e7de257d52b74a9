"""What Koroku knows about the user, through the composition root and a real SQLite file:
the `remember` tool (no approval, says what it stored), the facts' one stable place in the
request, superseding, a second writer on the same log, turning the feature off, bad input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.app.config import default_paths
from koroku_desktop.app.runtime import Runtime, build_runtime
from koroku_desktop.domain.events import FactEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.facts import MAX_FACT_CHARS, FactRefused
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import FunctionResponsePart
from tests.fakes.chat_model import FakeChatModel, call


class NeverAsked:
    """Fails the test if any tool call needs the person's word."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        raise AssertionError(f"{request.tool} asked for approval")


def open_runtime(model: FakeChatModel, front_end: str = "app") -> Runtime:
    return build_runtime(NeverAsked(), default_paths(), model=model, front_end=front_end)


@pytest.fixture
def runtimes() -> Iterator[list[Runtime]]:
    opened: list[Runtime] = []
    yield opened
    for runtime in opened:
        runtime.close()


def fact_events(runtime: Runtime) -> list[StoredEvent]:
    return [
        e
        for e in runtime.log.entries(kinds=["fact"], limit=100)
        if isinstance(e, StoredEvent) and isinstance(e.event, FactEvent)
    ]


def tool_responses(runtime: Runtime) -> list[dict[str, Any]]:
    return [
        p.response
        for m in runtime.agent.view.messages
        if isinstance(m.event, MessageEvent)
        for p in m.event.parts
        if isinstance(p, FunctionResponsePart)
    ]


def remembers(subject: str, fact: str, category: str = "about_you") -> Any:
    """A model that stores one fact on the first step of each turn, then answers."""

    def reply(request: ModelRequest) -> Any:
        last = request.contents[-1]
        if last.function_responses:
            return "Noted."
        return [call("remember", subject=subject, fact=fact, category=category)]

    return reply


async def test_the_remember_tool_stores_a_fact_without_asking_and_says_what_it_stored(
    runtimes: list[Runtime],
) -> None:
    model = FakeChatModel(remembers("home city", "Lives in Oslo.", "about_you"))
    runtime = open_runtime(model)
    runtimes.append(runtime)
    result = await runtime.agent.run_turn("remember that I live in Oslo")
    assert result.ok, result.error

    (stored,) = fact_events(runtime)
    assert isinstance(stored.event, FactEvent)
    assert stored.event.source == "model" and stored.event.text == "Lives in Oslo."
    said = next(m for m in runtime.agent.view.messages if m.event.is_user_turn)  # type: ignore[union-attr]
    assert stored.event.from_seqs == [said.seq] and stored.event.from_ids == [said.event_id]
    assert stored.turn_id == said.turn_id  # appended through the turn
    (answer,) = tool_responses(runtime)
    assert answer == {
        "stored": "home city: Lives in Oslo.",
        "category": "about_you",
        "id": stored.seq,
    }

    # The next turn's request carries it, once, at the end of the system instruction.
    model.reply = lambda request: "ok"
    assert (await runtime.agent.run_turn("hi")).ok
    instruction = model.requests[-1].system_instruction
    assert instruction.endswith("\n- (about you) home city: Lives in Oslo.")
    assert instruction.count("Lives in Oslo") == 1


async def test_the_prefix_is_byte_stable_until_a_fact_changes_and_a_newer_fact_supersedes(
    runtimes: list[Runtime],
) -> None:
    model = FakeChatModel(lambda request: "ok")
    runtime = open_runtime(model)
    other = open_runtime(FakeChatModel(lambda request: "unused"), front_end="terminal")
    runtimes.extend([runtime, other])
    assert runtime.facts is not None and other.facts is not None
    other.facts.remember("default", "coffee", "Takes it black.", "preference")
    other.facts.remember("default", "Sister", "Anna, lives in Bergen.", "person")

    for text in ("one", "two"):
        assert (await runtime.agent.run_turn(text)).ok
    first, second = (r.system_instruction for r in model.requests)
    assert first == second  # nothing changed: the cached prefix holds
    # Sorted by category (about you, preferences, people, projects), then subject.
    assert first.endswith(
        "- (preferences) coffee: Takes it black.\n- (people) Sister: Anna, lives in Bergen."
    )

    # Another process states a newer fact on the same subject (case and spaces ignored).
    stated = other.facts.remember("default", "  COFFEE ", "Oat flat white, no sugar.", "preference")
    assert stated.replaced is not None and stated.replaced.text == "Takes it black."
    assert (await runtime.agent.run_turn("three")).ok
    third = model.requests[-1].system_instruction
    assert "Oat flat white" in third and "Takes it black" not in third
    assert third.startswith(first[: first.index("- (preferences)")])  # only the facts moved
    # The superseded fact stays in the log and in search.
    assert len(fact_events(runtime)) == 3
    assert any("black" in h.snippet for h in runtime.log.search("black", 10))


async def test_edit_and_forget_are_events_and_the_request_follows(
    runtimes: list[Runtime],
) -> None:
    model = FakeChatModel(lambda request: "ok")
    runtime = open_runtime(model)
    runtimes.append(runtime)
    assert runtime.facts is not None
    book = runtime.facts
    first = book.remember("default", "editor", "Uses vim.", "preference").stored
    edited = book.edit(first.seq, "Uses Helix now.").stored
    assert isinstance(edited.event, FactEvent) and edited.event.replaces_id == first.event_id
    assert [f.text for f in book.facts] == ["Uses Helix now."]
    with pytest.raises(LookupError, match="no fact has the id"):
        book.edit(first.seq, "stale id")  # the edited fact has a new id
    assert (await runtime.agent.run_turn("hi")).ok
    assert "Uses Helix now." in model.requests[-1].system_instruction
    book.forget(f"#{edited.seq}")
    assert book.facts == []
    assert (await runtime.agent.run_turn("again")).ok
    assert "Helix" not in model.requests[-1].system_instruction
    assert len(fact_events(runtime)) == 3  # nothing was deleted


async def test_a_fact_longer_than_a_page_is_refused_and_nothing_stored_is_lost(
    runtimes: list[Runtime],
) -> None:
    page = "word " * 600
    model = FakeChatModel(remembers("life story", page))
    runtime = open_runtime(model)
    runtimes.append(runtime)
    assert runtime.facts is not None
    kept = runtime.facts.remember("default", "name", "Jan.").stored
    assert (await runtime.agent.run_turn("remember all of this")).ok
    (answer,) = tool_responses(runtime)
    assert "at most 1,000 characters" in answer["error"] and "not stored" in answer["error"]
    with pytest.raises(FactRefused, match=f"at most {MAX_FACT_CHARS:,} characters"):
        runtime.facts.remember("default", "name", page)
    with pytest.raises(FactRefused, match="cannot be empty"):
        runtime.facts.remember("default", "name", "   ")
    assert [e.seq for e in fact_events(runtime)] == [kept.seq]
    assert [f.text for f in runtime.facts.facts] == ["Jan."]


async def test_turned_off_no_fact_is_sent_and_remember_is_not_offered(
    runtimes: list[Runtime],
) -> None:
    model = FakeChatModel(lambda request: "ok")
    runtime = open_runtime(model)
    runtimes.append(runtime)
    assert runtime.facts is not None
    runtime.facts.remember("default", "name", "Jan.")
    runtime.settings_store.update({"remember_facts": False})
    assert (await runtime.agent.run_turn("hi")).ok
    off = model.requests[-1]
    assert "Jan." not in off.system_instruction and "remember tool" not in off.system_instruction
    assert "remember" not in [t.name for t in off.tools]
    runtime.settings_store.update({"remember_facts": True})
    assert (await runtime.agent.run_turn("hi again")).ok
    on = model.requests[-1]
    assert "Jan." in on.system_instruction and "remember" in [t.name for t in on.tools]

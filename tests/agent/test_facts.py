"""What Koroku knows about the user, through the composition root and a real SQLite file:
the `remember` tool (no approval, says what it stored), the facts' one stable place in the
request, superseding, a second writer on the same log, turning the feature off, bad input."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from koroku_desktop.agent.facts import FactBook
from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.domain.events import FactEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.facts import MAX_FACT_CHARS, FactRefused
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import FunctionResponsePart
from tests.fakes.chat_model import FakeChatModel, call


def fact_events(runtime: Runtime) -> list[StoredEvent]:
    return [
        e
        for e in runtime.log.entries(kinds=["fact"], limit=100)
        if isinstance(e, StoredEvent) and isinstance(e.event, FactEvent)
    ]


def answering_ok(open_runtime: Callable[..., Runtime]) -> tuple[Runtime, FakeChatModel, FactBook]:
    """A runtime whose model answers "ok", and its fact book (facts are on by default)."""
    model = FakeChatModel(lambda request: "ok")
    runtime = open_runtime(model)
    assert runtime.facts is not None
    return runtime, model, runtime.facts


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
    open_runtime: Callable[..., Runtime],
) -> None:
    model = FakeChatModel(remembers("home city", "Lives in Oslo.", "about_you"))
    runtime = open_runtime(model)
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
    open_runtime: Callable[..., Runtime],
) -> None:
    model = FakeChatModel(lambda request: "ok")
    runtime = open_runtime(model)
    other = open_runtime(FakeChatModel(lambda request: "unused"), front_end="terminal")
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
    open_runtime: Callable[..., Runtime],
) -> None:
    runtime, model, book = answering_ok(open_runtime)
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
    open_runtime: Callable[..., Runtime],
) -> None:
    page = "word " * 600
    model = FakeChatModel(remembers("life story", page))
    runtime = open_runtime(model)
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
    open_runtime: Callable[..., Runtime],
) -> None:
    runtime, model, book = answering_ok(open_runtime)
    book.remember("default", "name", "Jan.")
    runtime.settings_store.update({"remember_facts": False})
    assert (await runtime.agent.run_turn("hi")).ok
    off = model.requests[-1]
    assert "Jan." not in off.system_instruction and "remember tool" not in off.system_instruction
    assert "remember" not in [t.name for t in off.tools]
    runtime.settings_store.update({"remember_facts": True})
    assert (await runtime.agent.run_turn("hi again")).ok
    on = model.requests[-1]
    assert "Jan." in on.system_instruction and "remember" in [t.name for t in on.tools]


def summariser_listing(*lines: str) -> Any:
    """Summaries listing `lines` in their facts block (`"FIRST"`: the seq of the first
    message in the transcript); everything else: a long answer."""

    def reply(request: ModelRequest) -> str:
        if request.system_instruction == SUMMARIZER_INSTRUCTION:
            said = request.contents[-1].parts[-1].text  # type: ignore[union-attr]
            first = re.search(r"#(\d+) User:", said).group(1)  # type: ignore[union-attr]
            block = "\n".join(lines).replace('"FIRST"', first)
            return f"SUMMARY: Jan talked about coffee.\n<facts>\n{block}\n</facts>"
        return "an answer " * 40

    return reply


async def talk(runtime: Runtime, *texts: str) -> None:
    for text in texts:
        assert (await runtime.agent.run_turn(text)).ok


async def test_each_compaction_lists_new_facts_citing_what_it_summarised(
    open_runtime: Callable[..., Runtime],
) -> None:
    model = FakeChatModel(
        summariser_listing(
            json.dumps(
                {
                    "subject": "Coffee",
                    "category": "preference",
                    "fact": "Oat flat white now.",
                    "from": ["FIRST", 9999],
                }
            ),
            json.dumps({"subject": "name", "fact": "Jan."}),  # already known: skipped
            "not a fact at all",
            json.dumps({"subject": "life story", "category": "person", "fact": "x" * 5000}),
            json.dumps({"subject": "sister", "category": "pets", "fact": "Anna."}),
        )
    )
    runtime = open_runtime(model)
    assert runtime.facts is not None
    runtime.facts.remember("default", "name", "Jan.")
    runtime.facts.remember("default", "coffee", "Black.", "preference")
    await talk(runtime, "I switched to oat flat whites " * 20, "my sister is Anna " * 20, "ok")
    compaction = await runtime.compactor.compact_now(runtime.agent)
    assert compaction is not None
    assert compaction.summary == "SUMMARY: Jan talked about coffee."  # the block is not in it

    (ask,) = [r for r in model.requests if r.system_instruction == SUMMARIZER_INSTRUCTION]
    asked = ask.contents[-1].parts[-1].text  # type: ignore[union-attr]
    assert "Known facts:\n- name: Jan.\n- coffee: Black." in asked

    assert runtime.facts.refresh()  # what the compaction appended, read from the log
    facts = {f.subject: f for f in runtime.facts.facts}
    assert facts["Coffee"].text == "Oat flat white now." and facts["Coffee"].source == "compaction"
    first_user_seq = next(m.seq for m in runtime.log.entries(kinds=["message"]))
    assert facts["Coffee"].from_seqs == (first_user_seq,)  # the made-up #9999 is dropped
    assert len(facts["life story"].text) == MAX_FACT_CHARS  # cut, not lost
    assert facts["sister"].category == "about_you"  # an unknown category falls back
    assert facts["name"].source == "person"
    new = [e for e in fact_events(runtime) if e.event.source == "compaction"]  # type: ignore[union-attr]
    (stored_compaction,) = [
        e for e in runtime.log.entries(kinds=["compaction"]) if isinstance(e, StoredEvent)
    ]
    assert {e.turn_id for e in new} == {stored_compaction.turn_id}  # landed together
    memory = "".join(p.read_text() for p in (runtime.paths.home / "memory").glob("*.md"))
    assert "SUMMARY: Jan talked" in memory and "<facts>" not in memory

    await talk(runtime, "and now?")
    assert "- (preferences) Coffee: Oat flat white now." in model.requests[-1].system_instruction


async def test_with_facts_off_a_compaction_asks_for_none_and_stores_none(
    open_runtime: Callable[..., Runtime],
) -> None:
    model = FakeChatModel(summariser_listing(json.dumps({"subject": "a", "fact": "b"})))
    runtime = open_runtime(model)
    runtime.settings_store.update({"remember_facts": False})
    await talk(runtime, "hello " * 50, "more " * 50, "ok")
    compaction = await runtime.compactor.compact_now(runtime.agent)
    assert compaction is not None and "<facts>" not in compaction.summary
    (ask,) = [r for r in model.requests if r.system_instruction == SUMMARIZER_INSTRUCTION]
    assert "Known facts" not in ask.contents[-1].parts[-1].text  # type: ignore[union-attr]
    assert fact_events(runtime) == []


async def test_damaged_fact_rows_are_skipped_and_the_turn_goes_on(
    open_runtime: Callable[..., Runtime],
) -> None:
    runtime, model, book = answering_ok(open_runtime)
    book.remember("default", "name", "Jan.")
    with sqlite3.connect(runtime.paths.db) as conn:
        for payload in ("{not json", '{"subject": "x", "text": 5, "schema_version": 99}'):
            conn.execute(
                "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
                " VALUES ('default', 'fact', 1, ?, 0)",
                (payload,),
            )
        conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
            " VALUES ('default', 'fact', 1, CAST(? AS TEXT), 0)",
            (b'{"subject": "\xff", "text": "bad bytes"}',),
        )
    assert (await runtime.agent.run_turn("hi")).ok
    assert model.requests[-1].system_instruction.endswith("- (about you) name: Jan.")
    assert [f.text for f in book.facts] == ["Jan."]


async def test_the_tool_refuses_an_empty_fact_and_an_overlong_subject_storing_nothing(
    open_runtime: Callable[..., Runtime],
) -> None:
    def reply(request: ModelRequest) -> Any:
        if request.contents[-1].function_responses:
            return "Sorry."
        return [
            call("remember", subject="mood", fact="   "),
            call("remember", subject="s" * 200, fact="fine"),
        ]

    runtime = open_runtime(FakeChatModel(reply))
    assert (await runtime.agent.run_turn("remember nothing")).ok
    empty, long_subject = tool_responses(runtime)
    assert empty["error"].startswith("not stored: a fact cannot be empty")
    assert "subject" in long_subject["error"] and "80 characters" in long_subject["error"]
    assert fact_events(runtime) == []

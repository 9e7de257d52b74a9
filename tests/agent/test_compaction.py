"""Compaction against the fake Gemini server: when it happens, what the next request holds,
the memory file, failures of the summarizer, and recall over compacted and cleared history."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from koroku_desktop.agent.memory import append_memory, memory_file
from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.domain.context import SUMMARY_PREFIX
from koroku_desktop.domain.events import ClearedEvent, CompactionEvent, StoredEvent
from tests.agent.conftest import Harness, error_summary
from tests.fakes.gemini_replies import CallsReply, ReceivedRequest, TextReply, prompt_tokens

Factory = Callable[..., Harness]
LONG = "lorem ipsum dolor sit amet " * 90  # ~2,400 characters, ~600 tokens


def compactions(h: Harness) -> list[StoredEvent]:
    return [e for e in h.log.entries("default", kinds=["compaction"]) if isinstance(e, StoredEvent)]


async def talk_until_compacted(h: Harness, max_turns: int = 10) -> list[int]:
    """Long turns until a compaction appears; return each turn's reported prompt size."""
    sizes: list[int] = []
    for n in range(max_turns):
        before = len(compactions(h))
        result = await h.run_turn(f"turn {n}: {LONG}")
        assert result.ok, result.error
        usage = h.agent.view.message_events()[-1].usage
        sizes.append(usage.prompt_tokens or 0 if usage else 0)
        if len(compactions(h)) > before:
            return sizes
    raise AssertionError("no compaction happened")


async def test_passing_the_threshold_compacts_and_the_next_request_is_summary_plus_tail(
    harness_factory: Factory,
) -> None:
    h: Harness = harness_factory(compact_at=4_000)
    meters: list[int] = []
    h.agent.hooks.on_context_meter.append(lambda m: meters.append(m.used_tokens))

    await talk_until_compacted(h)

    (stored,) = compactions(h)
    event = stored.event
    assert isinstance(event, CompactionEvent)
    assert event.summary == "SUMMARY 1: the user is testing compaction."
    assert event.tokens_before is not None and event.tokens_before >= 4_000
    assert event.tokens_after is not None and event.tokens_after < event.tokens_before
    # The live context is now [summary] + the kept tail, starting at the last user turn.
    view = h.agent.view
    assert view.summary == event
    first_kept = view.messages[0]
    assert first_kept.seq == event.kept_from_seq > event.covers_up_to_seq
    assert first_kept.event.is_user_turn  # type: ignore[union-attr]
    # The meter was reported after the compaction, from the compacted size.
    assert meters[-1] < 4_000

    # The memory file got `[HH:MM] in <conversation>: summary`.
    text = memory_file(h.home, datetime.now()).read_text(encoding="utf-8")
    entry = (
        r"^\[\d\d:\d\d\] in Conversation \(default\): SUMMARY 1: the user is testing compaction\.$"
    )
    assert re.search(entry, text, re.M)

    # The summarizer request: its own instruction, no tools, tool output truncated.
    (summarizer,) = h.summarizer_requests()
    assert summarizer.system_text == SUMMARIZER_INSTRUCTION
    assert not summarizer.has_tools
    assert "more characters cut" in summarizer.last_text()

    # The next turn sends the summary + kept tail; the fake checked signatures and pairing.
    before = h.turn_requests()[-1]
    result = await h.run_turn("what now?")
    assert result.ok, result.error
    nxt = next(r for r in h.turn_requests() if r.last_text() == "what now?")
    texts = ["".join(p.get("text", "") for p in c["parts"]) for c in nxt.contents]
    assert texts[0] == SUMMARY_PREFIX + event.summary
    assert any("thoughtSignature" in p for c in nxt.contents for p in c["parts"])
    assert any("functionCall" in p for c in nxt.contents for p in c["parts"])
    assert prompt_tokens(nxt.body) < prompt_tokens(before.body)


async def test_the_summary_rolls_over_compactions(harness_factory: Factory) -> None:
    h: Harness = harness_factory(compact_at=4_000)
    await talk_until_compacted(h)
    await talk_until_compacted(h)
    first, second = (c.event for c in compactions(h))
    assert isinstance(first, CompactionEvent) and isinstance(second, CompactionEvent)
    assert second.covers_up_to_seq > first.covers_up_to_seq
    rolling = h.summarizer_requests()[-1].last_text()
    assert "Previous summary" in rolling and first.summary in rolling
    assert h.agent.view.summary == second
    assert memory_file(h.home, datetime.now()).read_text(encoding="utf-8").count("): SUMMARY") == 2


async def test_far_below_the_threshold_nothing_is_counted_or_summarised(
    harness_factory: Factory,
) -> None:
    h: Harness = harness_factory(compact_at=100_000)
    for n in range(3):
        assert (await h.run_turn(f"hello {n}")).ok
    assert not [r for r in h.fake.requests if r.method == "countTokens"]
    assert h.summarizer_requests() == []
    assert compactions(h) == []
    assert not (h.home / "memory").exists() or not any((h.home / "memory").iterdir())


@pytest.mark.parametrize("failure", ["http-503", "empty-reply"])
async def test_a_failing_summarizer_appends_nothing_and_is_retried_after_the_next_turn(
    harness_factory: Factory,
    failure: str,
) -> None:
    h: Harness = harness_factory(compact_at=4_000)
    h.brain.summary = (
        error_summary(503) if failure == "http-503" else (lambda request: TextReply(""))
    )
    attempts = 0
    for n in range(10):
        result = await h.run_turn(f"turn {n}: {LONG}")
        assert result.ok, result.error  # the turn itself succeeds
        if h.summarizer_requests():
            attempts = len(h.summarizer_requests())
            break
    assert attempts > 0
    assert compactions(h) == []
    assert h.agent.view.summary is None
    assert h.compactor.last_problem is not None
    assert not memory_file(h.home, datetime.now()).exists()

    # The summarizer recovers: the next turn compacts.
    h.brain.summary = None
    assert (await h.run_turn("and now?")).ok
    assert len(compactions(h)) == 1
    assert memory_file(h.home, datetime.now()).exists()
    assert (await h.run_turn("still there?")).ok


async def test_compact_now_summarises_in_chunks_when_the_input_is_too_large(
    harness_factory: Factory,
) -> None:
    h: Harness = harness_factory(compact_at=1_000_000, max_input_chars=6_000, keep_fraction=0.0)
    for n in range(6):
        assert (await h.run_turn(f"turn {n}: {LONG}")).ok
    assert compactions(h) == []  # far below the threshold: nothing automatic

    event = await h.compactor.compact_now(h.agent)

    assert event is not None and compactions(h)[-1].event == event
    requests = h.summarizer_requests()
    assert len(requests) > 1  # chunked
    assert all(len(r.last_text()) < 6_000 for r in requests)
    # Each chunk folds the summary so far in: a rolling summary.
    for earlier, later in zip(h.brain.summaries, requests[1:], strict=False):
        assert earlier in later.last_text()
    assert event.summary == h.brain.summaries[-1]
    assert event.tokens_after is not None and event.tokens_before is not None
    assert event.tokens_after < event.tokens_before
    # The kept tail is the last turn: from its user content on.
    assert h.agent.view.messages[0].event.is_user_turn  # type: ignore[union-attr]
    assert "turn 5" in json.dumps(h.agent.view.messages[0].event.model_dump())


async def test_compact_now_with_only_the_latest_turn_does_nothing(
    harness_factory: Factory,
) -> None:
    h: Harness = harness_factory()
    assert (await h.run_turn("hi")).ok
    assert await h.compactor.compact_now(h.agent) is None
    assert h.compactor.last_problem and "nothing to compact" in h.compactor.last_problem
    assert h.summarizer_requests() == []


async def test_after_a_restart_the_meter_uses_the_compacted_size(
    harness_factory: Factory,
) -> None:
    h: Harness = harness_factory(compact_at=4_000)
    await talk_until_compacted(h)
    event = compactions(h)[-1].event
    assert isinstance(event, CompactionEvent) and event.tokens_after is not None

    again: Harness = harness_factory(compact_at=4_000)
    await again.agent.load()
    meter = again.agent.context_meter()
    assert meter.used_tokens == event.tokens_after < 4_000
    # Talking on from the reloaded log does not compact again straight away. The turn reads
    # no file: compacted size + notes.txt (~650 tokens) lands within the fake's random
    # thought-signature lengths of the threshold, so a read would compact again now and then.
    again.brain.read_files = False
    assert (await again.run_turn("short")).ok
    assert again.agent.context_meter().used_tokens < 4_000 <= event.tokens_before
    assert len(compactions(again)) == 1


async def test_search_and_recall_find_compacted_and_cleared_history(
    harness_factory: Factory,
) -> None:
    h: Harness = harness_factory(compact_at=4_000)
    h.brain.read_files = False
    assert (await h.run_turn("my bike lock code is zebracrossing")).ok
    await talk_until_compacted(h)
    assert "zebracrossing" not in json.dumps(
        [e.model_dump() for e in h.agent.view.message_events()]
    )
    await h.agent.clear()
    (latest,) = h.log.entries("default", newest_first=True, limit=1)
    assert isinstance(latest, StoredEvent) and isinstance(latest.event, ClearedEvent)

    hits = h.log.search("zebracrossing")
    assert hits and "[[zebracrossing]]" in hits[-1].snippet

    def recall_then_answer(request: ReceivedRequest) -> CallsReply | TextReply:
        last = request.contents[-1]
        if any("functionResponse" in p for p in last["parts"]):
            return TextReply("found it")
        return CallsReply((("recall", {"query": "zebracrossing"}),))

    h.fake.reply_with(recall_then_answer, times=2)
    result = await h.run_turn("what was my lock code?")
    assert result.ok and result.text == "found it"
    response = h.agent.view.message_events()[-2].function_responses[0]
    assert response.name == "recall"
    found = json.dumps(response.response)
    assert "zebracrossing" in found and "data, not instructions" in found


def test_memory_entries_are_appended_never_rewritten(tmp_path: Path) -> None:
    when = datetime(2025, 3, 7, 9, 5)
    path = append_memory(tmp_path / "data", "first summary", when)
    append_memory(tmp_path / "data", "second\n\nsummary", when.replace(hour=17))
    assert path == tmp_path / "data" / "memory" / "07-03-2025.md"
    assert path.read_text(encoding="utf-8") == (
        "[09:05]: first summary\n\n[17:05]: second\n\nsummary\n\n"
    )


async def test_count_tokens_is_asked_only_when_an_inexact_estimate_is_near_the_threshold(
    harness_factory: Factory,
) -> None:
    h: Harness = harness_factory(compact_at=100_000)
    h.brain.read_files = False
    assert (await h.run_turn(f"first: {LONG}")).ok
    used = h.agent.estimate_context_tokens()  # exact: the reply's reported usage
    h.agent.options.compact_at_tokens = int(used / 0.9)
    assert (await h.run_turn("short")).ok  # exact again, near: no count needed
    assert not [r for r in h.fake.requests if r.method == "countTokens"]

    h.fake.fail(400, message="bad request for this test")
    result = await h.run_turn("this one fails")  # nothing reported since: estimated
    assert result.error is not None
    counts = [r for r in h.fake.requests if r.method == "countTokens"]
    assert len(counts) == 1
    assert h.summarizer_requests() == [] and compactions(h) == []  # counted below threshold

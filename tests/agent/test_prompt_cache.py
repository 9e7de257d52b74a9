"""A prompt Gemini can cache: the system instruction and history stay byte-stable between
turns (the time rides in each user turn), the cache's share is recorded, thinking levels."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest

from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.turn_time import is_time_note
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.render.blocks import TextBlock
from koroku_desktop.render.fold import entry_view
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.fakes.fixtures import TEST_API_KEY
from tests.fakes.gemini_server import FakeGemini


class _Yes:
    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(allowed=True)


def _clock(times: list[datetime]) -> Callable[[], datetime]:
    moments: Iterator[datetime] = iter(times)
    return lambda: next(moments)


@pytest.fixture
async def agent(fake_gemini: FakeGemini, koroku_home: Path) -> AsyncIterator[Agent]:
    log = SqliteEventLog(koroku_home / "koroku.db")
    model = GeminiChatModel(TEST_API_KEY, timeout_s=20, retry_attempts=1)
    options = AgentOptions("gemini-test", 10, koroku_home, koroku_home)
    yield Agent(log, model, ToolRegistry(None), ApprovalPolicy(), _Yes(), options)
    await model.aclose()
    log.close()


def _prefix(body: dict[str, object]) -> str:
    return json.dumps([body.get("systemInstruction"), body.get("tools")], sort_keys=True)


async def test_consecutive_requests_keep_a_byte_identical_prefix_across_a_minute_boundary(
    agent: Agent, fake_gemini: FakeGemini
) -> None:
    agent.clock = _clock([datetime(2026, 11, 30, 9, 59, 58), datetime(2026, 11, 30, 10, 0, 3)])
    fake_gemini.reply_text("first answer")
    fake_gemini.reply_text("second answer")
    assert (await agent.run_turn("what time is it?")).ok
    assert (await agent.run_turn("and now?")).ok

    first, second = fake_gemini.generate_requests()
    assert _prefix(first.body) == _prefix(second.body)
    sent_before = [json.dumps(c, sort_keys=True) for c in first.contents]
    sent_after = [json.dumps(c, sort_keys=True) for c in second.contents]
    assert sent_after[: len(sent_before)] == sent_before
    # The time went into each user turn instead, as a note of its own.
    assert "09:59" in sent_before[0] and "10:00" not in sent_before[0]
    assert "10:00" in sent_after[-1]
    assert "10:00" not in json.dumps(second.body.get("systemInstruction"))

    # What the fake's implicit cache served is recorded, and the meter says it.
    replies = [m.event for m in agent.view.messages if isinstance(m.event, MessageEvent)]
    usage = replies[-1].usage
    assert usage is not None and usage.cached_tokens and usage.prompt_tokens
    assert 0 < usage.cached_tokens < usage.prompt_tokens
    note = agent.context_meter().cache_note()
    assert f"{usage.cached_tokens:,} of {usage.prompt_tokens:,}" in note


async def test_the_time_note_is_stored_but_not_shown_as_the_persons_text(
    agent: Agent, fake_gemini: FakeGemini
) -> None:
    agent.clock = _clock([datetime(2026, 11, 30, 14, 5)])
    assert (await agent.run_turn("hello")).ok
    user = agent.view.messages[0]
    assert isinstance(user.event, MessageEvent)
    assert [is_time_note(p) for p in user.event.parts] == [True, False]
    assert entry_view(user).blocks == (TextBlock("hello"),)


async def test_quick_turns_use_the_quick_thinking_level(
    agent: Agent, fake_gemini: FakeGemini
) -> None:
    agent.options.thinking_level = ""
    agent.options.quick_thinking_level = "low"
    assert (await agent.run_turn("long question")).ok
    assert (await agent.run_turn("quick question", quick=True)).ok
    normal, quick = fake_gemini.generate_requests()
    normal_config = normal.body["generationConfig"]["thinkingConfig"]
    quick_config = quick.body["generationConfig"]["thinkingConfig"]
    # The SDK sends this config in proto field names; the service reads both spellings.
    assert not {"thinkingLevel", "thinking_level"} & set(normal_config)
    level = quick_config.get("thinkingLevel", quick_config.get("thinking_level"))
    assert level == "LOW"

"""Agent behaviour that is not about the wire, with the in-process FakeChatModel."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.domain.events import MessageEvent, RejectedEvent, StoredEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.model_io import ModelError, ModelRequest
from koroku_desktop.domain.parts import FunctionCallPart, TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.agent.conftest import YesApprover
from tests.fakes.chat_model import FakeChatModel, call

Build = Callable[[FakeChatModel], Agent]


@pytest.fixture
def build(koroku_home: Path, tmp_path: Path) -> Iterator[Build]:
    logs: list[SqliteEventLog] = []
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the notes")

    def make(model: FakeChatModel) -> Agent:
        log = SqliteEventLog(koroku_home / "koroku.db")
        logs.append(log)
        options = AgentOptions("gemini-test", 10, workspace, koroku_home)
        return Agent(log, model, ToolRegistry(None), ApprovalPolicy(), YesApprover(), options)

    yield make
    for log in logs:
        log.close()


def _texts(request: ModelRequest) -> str:
    return " ".join(p.text for c in request.contents for p in c.parts if isinstance(p, TextPart))


async def test_a_cut_off_answer_carries_its_notice(build: Build) -> None:
    cut = MessageEvent(
        role="model", origin="model", parts=[TextPart(text="half")], finish_reason="MAX_TOKENS"
    )
    agent = build(FakeChatModel.scripted(cut))
    result = await agent.run_turn("tell me all")
    assert result.ok and result.text == "half"
    assert result.notice is not None and "MAX_TOKENS" in result.notice
    assert (await agent.run_turn("thanks")).notice is None


async def test_too_large_message_is_set_aside_and_the_next_turn_goes_on(build: Build) -> None:
    model = FakeChatModel.scripted(then="fine")
    model.max_input_tokens = 500
    agent = build(model)
    huge = "paste " * 2_000
    failed = await agent.run_turn(huge)
    assert failed.error is not None and failed.error.kind == "too_large"
    assert "set aside" in failed.error.message and "Attach it as a file" in failed.error.message
    rejected = [
        e.event
        for e in agent.log.entries("default")
        if isinstance(e, StoredEvent) and isinstance(e.event, RejectedEvent)
    ]
    assert len(rejected) == 1
    result = await agent.run_turn("a small question")
    assert result.ok and result.text == "fine"
    assert "paste" not in _texts(model.requests[-1])
    # A restart reads the same: the rejected message stays out.
    again = build(model)
    await again.run_turn("after a restart")
    assert "paste" not in _texts(model.requests[-1])


async def test_a_dangling_call_in_the_log_is_fixed_in_the_request_with_a_warning(
    build: Build, caplog: pytest.LogCaptureFixture
) -> None:
    model = FakeChatModel.scripted(then="answered")
    agent = build(model)
    agent.log.append(
        "default",
        [
            MessageEvent(role="user", parts=[TextPart(text="one")]),
            MessageEvent(role="model", parts=[FunctionCallPart(name="bash", id="x", args={})]),
            MessageEvent(role="user", parts=[TextPart(text="two")]),
        ],
    )
    with caplog.at_level(logging.WARNING):
        result = await agent.run_turn("three")
    assert result.ok, result.error
    assert any("request fixed at seq 2" in r.getMessage() for r in caplog.records)


async def test_tool_calls_run_and_answer(build: Build) -> None:
    model = FakeChatModel.scripted([call("read_file", "c1", path="notes.txt")], "read it")
    agent = build(model)
    result = await agent.run_turn("read my notes")
    assert result.ok and result.text == "read it" and result.tool_calls == 1
    response = model.requests[-1].contents[-1].function_responses[0]
    assert response.response["content"] == "the notes"


async def test_model_errors_end_the_turn(build: Build) -> None:
    agent = build(FakeChatModel.scripted(ModelError("quota", "slow down", 429)))
    result = await agent.run_turn("hi")
    assert result.error is not None and result.error.kind == "quota"


async def test_a_long_history_loads_its_tail_and_compaction_reads_the_rest(
    build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    from koroku_desktop.agent import loop
    from koroku_desktop.agent.compaction import Compactor
    from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION

    monkeypatch.setattr(loop, "LIVE_TAIL_LIMIT", 10)

    def reply(request: ModelRequest) -> str:
        if request.system_instruction == SUMMARIZER_INSTRUCTION:
            return "SUMMARY of everything"
        return "recent answer"

    model = FakeChatModel(reply)
    agent = build(model)
    agent.log.append(
        "default",
        [
            MessageEvent(role="user" if n % 2 == 0 else "model", parts=[TextPart(text=f"m{n}")])
            for n in range(60)
        ],
    )
    compactor = Compactor()
    compactor.attach(agent)
    result = await agent.run_turn("now")
    assert result.ok, result.error
    await compactor.wait()  # it runs in the background, after the turn
    first = model.requests[0]
    assert len(first.contents) <= 11 and "m0" not in _texts(first).split()
    (summarizer,) = [r for r in model.requests if r.system_instruction == SUMMARIZER_INSTRUCTION]
    transcript = _texts(summarizer)
    assert "m0" in transcript and "m50" in transcript  # the unloaded part was read
    assert agent.view.summary is not None and agent.view.unloaded is None
    await agent.run_turn("again")
    assert "SUMMARY of everything" in _texts(model.requests[-1])


async def test_a_long_history_a_sync_placed_first_is_read_whole_by_the_compaction(
    build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turns pulled from a hub are written after this device's unpushed ones but placed
    before them: the part left unloaded is what comes first in that order, not low seqs."""
    from koroku_desktop.agent import loop
    from koroku_desktop.agent.compaction import Compactor
    from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION

    monkeypatch.setattr(loop, "LIVE_TAIL_LIMIT", 10)

    def said(n: int, who: str) -> MessageEvent:
        return MessageEvent(role="user" if n % 2 == 0 else "model", parts=[TextPart(text=who)])

    model = FakeChatModel(
        lambda r: "SUMMARY" if r.system_instruction == SUMMARIZER_INSTRUCTION else "answer"
    )
    agent = build(model)
    agent.log.append("default", [said(n, f"mine{n}") for n in range(30)])
    pulled = [
        StoredEvent(0, "default", 1.0, said(n, f"theirs{n}"), new_id(), f"t{n // 2}", "app@B")
        for n in range(30)
    ]
    assert isinstance(agent.log, SqliteEventLog)
    agent.log.merge(pulled, list(range(1, 31)))  # seqs 31-60, placed first
    compactor = Compactor()
    compactor.attach(agent)
    assert (await agent.run_turn("now")).ok
    await compactor.wait()
    (summarizer,) = [r for r in model.requests if r.system_instruction == SUMMARIZER_INSTRUCTION]
    words = _texts(summarizer).split()
    assert {f"theirs{n}" for n in range(30)} <= set(words)  # all of the pulled part
    assert "mine0" in words and "now" not in words
    assert words.index("theirs29") < words.index("mine0")  # in the one order

"""The agent loop over a real SQLite log and the real SDK against the strict fake server."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.agent.loop import CANCELLED, DENIED, OVER_BUDGET, Agent, AgentOptions
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import visible_text
from koroku_desktop.domain.turn_time import without_time_note
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.fakes.fixtures import TEST_API_KEY
from tests.fakes.gemini_server import FakeGemini


@dataclass
class ScriptedApprover:
    """Answers approval requests from a list of decisions (then yes), recording each request."""

    decisions: list[ApprovalDecision] = field(default_factory=list)
    asked: list[ApprovalRequest] = field(default_factory=list)

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return self.decisions.pop(0) if self.decisions else ApprovalDecision(allowed=True)


@dataclass
class Setup:
    agent: Agent
    log: SqliteEventLog
    approver: ScriptedApprover
    workspace: Path


@pytest.fixture
async def make_agent(
    fake_gemini: FakeGemini, koroku_home: Path, tmp_path: Path
) -> AsyncIterator[Callable[..., Setup]]:
    closers: list[tuple[GeminiChatModel, SqliteEventLog]] = []
    workspace = tmp_path / "ws"
    workspace.mkdir()

    def build(max_tool_calls: int = 10) -> Setup:
        log = SqliteEventLog(koroku_home / "koroku.db")
        model = GeminiChatModel(TEST_API_KEY, timeout_s=20, retry_attempts=1)
        approver = ScriptedApprover()
        options = AgentOptions("gemini-test", max_tool_calls, workspace, koroku_home)
        agent = Agent(log, model, ToolRegistry(None), ApprovalPolicy(), approver, options)
        closers.append((model, log))
        return Setup(agent, log, approver, workspace)

    yield build
    for model, log in closers:
        await model.aclose()
        log.close()


def _messages(log: SqliteEventLog) -> list[MessageEvent]:
    return [e.event for e in log.load_live("default").events if isinstance(e.event, MessageEvent)]


async def _until(predicate: Callable[[], bool]) -> None:
    async with asyncio.timeout(20):
        while not predicate():  # noqa: ASYNC110 (polls a file or the fake server)
            await asyncio.sleep(0.02)


async def test_cancel_during_a_tool_call_answers_it_and_the_next_turn_is_accepted(
    make_agent: Callable[..., Setup], fake_gemini: FakeGemini
) -> None:
    s = make_agent()
    marker = s.workspace / "started"
    fake_gemini.reply_calls(("bash", {"command": f"touch {marker}; sleep 30"}))
    turn = asyncio.create_task(s.agent.run_turn("run something slow"))
    await _until(marker.exists)
    assert s.agent.cancel()
    result = await turn
    assert result.cancelled and not result.ok
    last = _messages(s.log)[-1]
    assert last.role == "user" and last.function_responses[0].response == CANCELLED
    fake_gemini.reply_text("fine")
    assert (await s.agent.run_turn("never mind")).text == "fine"  # the strict fake accepted


async def test_cancel_while_the_model_streams_keeps_the_log_consistent(
    make_agent: Callable[..., Setup], fake_gemini: FakeGemini
) -> None:
    s = make_agent()
    fake_gemini.delay(10)
    fake_gemini.reply_text("too late")
    turn = asyncio.create_task(s.agent.run_turn("slow question"))
    await _until(lambda: len(fake_gemini.requests) > 0)
    s.agent.cancel()
    assert (await turn).cancelled
    assert [m.role for m in _messages(s.log)] == ["user"]
    fake_gemini.reset()
    fake_gemini.reply_text("quick answer")
    assert (await s.agent.run_turn("again")).text == "quick answer"


async def test_turns_run_one_at_a_time_in_the_order_asked(
    make_agent: Callable[..., Setup], fake_gemini: FakeGemini
) -> None:
    s = make_agent()
    fake_gemini.delay(0.5)
    fake_gemini.reply_text("answer one")
    fake_gemini.reply_text("answer two")
    first = asyncio.create_task(s.agent.run_turn("one"))
    second = asyncio.create_task(s.agent.run_turn("two"))
    results: list[TurnResult] = await asyncio.gather(first, second)
    assert [r.text for r in results] == ["answer one", "answer two"]
    texts = [visible_text(without_time_note(m.parts)) for m in _messages(s.log)]
    assert texts == ["one", "answer one", "two", "answer two"]


async def test_a_failing_hook_is_logged_not_fatal(
    make_agent: Callable[..., Setup], fake_gemini: FakeGemini, caplog: pytest.LogCaptureFixture
) -> None:
    s = make_agent()

    def broken(_piece: str) -> None:
        raise RuntimeError("subscriber bug")

    s.agent.hooks.on_text_delta.append(broken)
    fake_gemini.reply_text("still answered")
    with caplog.at_level(logging.ERROR):
        result = await s.agent.run_turn("hi")
    assert result.text == "still answered"
    assert "subscriber bug" in caplog.text


async def test_retry_after_a_failure_sends_the_kept_message_once(
    make_agent: Callable[..., Setup], fake_gemini: FakeGemini
) -> None:
    s = make_agent()
    fake_gemini.fail(400, message="nope")
    failed = await s.agent.run_turn("keep me")
    assert failed.error is not None and failed.error.kind == "bad_request"
    fake_gemini.reply_text("second try worked")
    retried = await s.agent.run_turn(None)
    assert retried.text == "second try worked"
    users = [m for m in _messages(s.log) if m.is_user_turn]
    assert len(users) == 1


async def test_parallel_calls_past_the_budget_are_answered_not_run(
    make_agent: Callable[..., Setup], fake_gemini: FakeGemini
) -> None:
    s = make_agent(max_tool_calls=2)
    fake_gemini.reply_calls(
        ("bash", {"command": "echo 1 >> n"}),
        ("bash", {"command": "echo 2 >> n"}),
        ("bash", {"command": "echo 3 >> n"}),
    )
    fake_gemini.reply_text("stopped there")
    result = await s.agent.run_turn("count")
    assert result.text == "stopped there" and result.budget_exhausted
    assert (s.workspace / "n").read_text().split() == ["1", "2"]
    responses = _messages(s.log)[2].function_responses
    assert responses[2].response == OVER_BUDGET
    assert not fake_gemini.generate_requests()[-1].has_tools


async def test_an_edited_command_runs_and_a_session_grant_stops_further_questions(
    make_agent: Callable[..., Setup], fake_gemini: FakeGemini
) -> None:
    s = make_agent()
    s.approver.decisions = [
        ApprovalDecision(allowed=True, scope="session", args={"command": "echo edited > out"})
    ]
    fake_gemini.reply_calls(("bash", {"command": "rm -rf /tmp/nothing"}))
    fake_gemini.reply_calls(("bash", {"command": "echo second >> out"}))
    fake_gemini.reply_text("done")
    assert (await s.agent.run_turn("go")).text == "done"
    assert (s.workspace / "out").read_text().split() == ["edited", "second"]
    assert len(s.approver.asked) == 1
    first_response = _messages(s.log)[2].function_responses[0]
    assert first_response.call_args == {"command": "echo edited > out"}


async def test_a_denied_call_tells_the_model(
    make_agent: Callable[..., Setup], fake_gemini: FakeGemini
) -> None:
    s = make_agent()
    s.approver.decisions = [ApprovalDecision(allowed=False)]
    fake_gemini.reply_calls(("write_file", {"path": "x.txt", "content": "x"}))
    fake_gemini.reply_text("ok, I won't")
    assert (await s.agent.run_turn("write x")).text == "ok, I won't"
    assert not (s.workspace / "x.txt").exists()
    sent = fake_gemini.generate_requests()[-1].contents[-1]["parts"][0]["functionResponse"]
    assert sent["response"] == DENIED

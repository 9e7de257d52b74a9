"""Agents over a real SQLite log and the real Gemini adapter, talking to the fake server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.agent.compaction import Compactor
from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.app.config import default_paths
from koroku_desktop.app.runtime import Runtime, build_runtime, recall_search
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.fakes.chat_model import FakeChatModel
from tests.fakes.gemini_replies import (
    CallsReply,
    ErrorReply,
    ReceivedRequest,
    Reply,
    TextReply,
)
from tests.fakes.gemini_server import FakeGemini
from tests.support.gemini import TEST_API_KEY

MODEL = "gemini-test"


class YesApprover:
    """The person says yes to everything (no tool here needs asking anyway)."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(allowed=True)


class NeverAsked:
    """Fails the test if any tool call needs the person's word."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        raise AssertionError(f"{request.tool} asked for approval")


OpenRuntime = Callable[..., Runtime]
"""`open_runtime(model, **build_runtime options)`: a runtime over the test's data dir."""


@pytest.fixture
def open_runtime() -> Iterator[OpenRuntime]:
    """Opens whole runtimes (the composition root's) with a `FakeChatModel` and an approver
    that is never asked; each is closed after the test."""
    opened: list[Runtime] = []

    def open_one(model: FakeChatModel, **options: Any) -> Runtime:
        runtime = build_runtime(NeverAsked(), default_paths(), model=model, **options)
        opened.append(runtime)
        return runtime

    yield open_one
    for runtime in opened:
        runtime.close()


def is_summarizer(request: ReceivedRequest) -> bool:
    """Whether the fake received a summarizer request (its own system instruction)."""
    return request.system_text == SUMMARIZER_INSTRUCTION


@dataclass
class Brain:
    """Scripted replies: every user turn reads notes.txt, then answers; summaries on demand.

    `summary` is what the summarizer answers (a callable of the request, an ErrorReply...).
    """

    summaries: list[str] = field(default_factory=list)
    summary: Callable[[ReceivedRequest], Reply] | None = None
    read_files: bool = True

    def __call__(self, request: ReceivedRequest) -> Reply:
        if is_summarizer(request):
            if self.summary is not None:
                return self.summary(request)
            text = f"SUMMARY {len(self.summaries) + 1}: the user is testing compaction."
            self.summaries.append(text)
            return TextReply(text)
        last = request.contents[-1]
        if any("functionResponse" in p for p in last.get("parts", [])):
            return TextReply("I read the notes.")
        if self.read_files:
            return CallsReply((("read_file", {"path": "notes.txt"}),))
        return TextReply("Noted.")


@dataclass
class Harness:
    """One agent with its compactor, log, model and data dir."""

    agent: Agent
    compactor: Compactor
    log: SqliteEventLog
    model: GeminiChatModel
    home: Path
    workspace: Path
    fake: FakeGemini
    brain: Brain

    async def run_turn(self, text: str) -> TurnResult:
        """One turn, then the background compaction it may have started, to its end."""
        result = await self.agent.run_turn(text)
        await self.compactor.wait()
        return result

    def summarizer_requests(self) -> list[ReceivedRequest]:
        return [r for r in self.fake.generate_requests() if is_summarizer(r)]

    def turn_requests(self) -> list[ReceivedRequest]:
        return [r for r in self.fake.generate_requests() if not is_summarizer(r)]


@pytest.fixture
async def harness_factory(
    fake_gemini: FakeGemini, koroku_home: Path, tmp_path: Path
) -> AsyncIterator[Callable[..., Harness]]:
    """Build harnesses over this test's data dir (several share the same database file)."""
    built: list[Harness] = []
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the notes\n" + "n" * 2_500, encoding="utf-8")
    brain = Brain()
    fake_gemini.set_fallback(brain)

    def build(compact_at: int = 3_000, **compactor_options: Any) -> Harness:
        log = SqliteEventLog(koroku_home / "koroku.db")
        model = GeminiChatModel(
            TEST_API_KEY,
            timeout_s=10,
            retry_attempts=2,
            retry_initial_delay_s=0.01,
            retry_max_delay_s=0.02,
        )
        options = AgentOptions(
            model=MODEL,
            max_tool_calls=10,
            workspace=workspace,
            data_dir=koroku_home,
            compact_at_tokens=compact_at,
        )
        agent = Agent(
            log,
            model,
            ToolRegistry(None),
            ApprovalPolicy(),
            YesApprover(),
            options,
            recall=recall_search(log),
        )
        compactor = Compactor(**compactor_options)
        compactor.attach(agent)
        harness = Harness(agent, compactor, log, model, koroku_home, workspace, fake_gemini, brain)
        built.append(harness)
        return harness

    yield build
    for harness in built:
        await harness.model.aclose()
        harness.log.close()


def error_summary(status: int = 503) -> Callable[[ReceivedRequest], Reply]:
    """A summarizer that fails with an HTTP error."""
    return lambda request: ErrorReply(status)

"""MCP tools in real turns: the real agent, SQLite log and Gemini adapter, the strict fake
Gemini server, and real MCP servers. Approvals, media, errors, timeouts and Stop."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.agent.loop import CANCELLED, DENIED, Agent, AgentOptions
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest, ApprovalScope
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import FunctionResponsePart
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.mcp import McpManager, McpTiming
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.fakes.fixtures import TEST_API_KEY
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.conftest import FAST, PNG_B64, recorded_calls, stdio_entry, write_config


@dataclass
class ScriptedApprover:
    """Answers with `allow` and `scope`, and remembers every request it was shown."""

    allow: bool = True
    scope: ApprovalScope = "once"
    seen: list[ApprovalRequest] = field(default_factory=list)

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.seen.append(request)
        return ApprovalDecision(allowed=self.allow, scope=self.scope)


@dataclass
class Setup:
    agent: Agent
    manager: McpManager
    approver: ScriptedApprover
    policy: ApprovalPolicy
    log: SqliteEventLog
    fake: FakeGemini
    calls: Path

    def responses(self) -> list[FunctionResponsePart]:
        return [
            p
            for e in self.log.entries("default")
            if isinstance(e.event, MessageEvent)
            for p in e.event.parts
            if isinstance(p, FunctionResponsePart)
        ]

    def sent_responses(self) -> list[dict[str, Any]]:
        """The functionResponse parts of the last request the fake received."""
        return [
            p["functionResponse"]
            for c in self.fake.generate_requests()[-1].contents
            for p in c.get("parts", [])
            if "functionResponse" in p
        ]


@pytest.fixture
async def setup_factory(
    fake_gemini: FakeGemini, koroku_home: Path, calls_file: Path, tmp_path: Path
) -> AsyncIterator[Callable[..., Any]]:
    built: list[tuple[McpManager, GeminiChatModel, SqliteEventLog]] = []

    async def build(timing: McpTiming = FAST) -> Setup:
        write_config(koroku_home / "mcp.json", {"s": stdio_entry(calls_file)})
        manager = McpManager(koroku_home / "mcp.json", koroku_home / "logs", timing)
        await manager.start()
        await manager.wait_settled(30)
        registry = ToolRegistry(None)
        registry.add_source(manager)
        log = SqliteEventLog(koroku_home / "koroku.db")
        model = GeminiChatModel(TEST_API_KEY, timeout_s=20, retry_attempts=1)
        policy = ApprovalPolicy()
        approver = ScriptedApprover()
        options = AgentOptions("gemini-test", 10, tmp_path, koroku_home)
        agent = Agent(log, model, registry, policy, approver, options)
        built.append((manager, model, log))
        return Setup(agent, manager, approver, policy, log, fake_gemini, calls_file)

    yield build
    for manager, model, log in built:
        await manager.stop()
        await model.aclose()
        log.close()


async def test_an_approved_call_runs_and_its_image_reaches_the_model(
    setup_factory: Callable[..., Any],
) -> None:
    s: Setup = await setup_factory()
    s.fake.reply_calls(("s_snapshot", {}))
    s.fake.reply_text("A tiny picture.")
    result = await s.agent.run_turn("take a snapshot")
    assert result.ok and result.text == "A tiny picture."
    assert s.approver.seen[0].tool == "s_snapshot"
    assert s.approver.seen[0].source == "MCP server 's', tool 'snapshot'"
    (logged,) = s.responses()
    assert logged.parts is not None and logged.parts[0].data == PNG_B64
    assert "__media__" not in logged.response
    (sent,) = s.sent_responses()
    assert sent["name"] == "s_snapshot"
    # The SDK sends a function response's fields as proto JSON in snake case (which the
    # service accepts, like camel case): the image travels inside the function response.
    (media,) = sent["parts"]
    blob = media.get("inlineData") or media["inline_data"]
    assert blob.get("mimeType", blob.get("mime_type")) == "image/png"
    assert blob["data"] == PNG_B64 and base64.b64decode(blob["data"])[:4] == b"\x89PNG"
    # Searchable like any tool call.
    assert any(hit.seq for hit in s.log.search("s_snapshot"))


async def test_a_denied_call_never_reaches_the_server(setup_factory: Callable[..., Any]) -> None:
    s: Setup = await setup_factory()
    s.approver.allow = False
    s.fake.reply_calls(("s_echo", {"text": "secret"}))
    s.fake.reply_text("Fine, I won't.")
    result = await s.agent.run_turn("echo something")
    assert result.ok
    assert recorded_calls(s.calls) == []
    assert s.sent_responses()[0]["response"] == DENIED


async def test_is_error_becomes_an_error_the_model_sees(setup_factory: Callable[..., Any]) -> None:
    s: Setup = await setup_factory()
    s.fake.reply_calls(("s_explode", {}))
    s.fake.reply_text("It failed.")
    await s.agent.run_turn("try it")
    (logged,) = s.responses()
    assert logged.failed and "explode" in logged.response["error"]
    assert "explode" in s.sent_responses()[0]["response"]["error"]


async def test_always_allow_is_per_server_tool_and_read_only_trust_is_opt_in(
    setup_factory: Callable[..., Any],
) -> None:
    s: Setup = await setup_factory()
    s.approver.scope = "always"
    s.fake.reply_calls(("s_echo", {"text": "1"}))
    s.fake.reply_calls(("s_echo", {"text": "2"}), ("s_peek", {}))
    s.fake.reply_text("done")
    await s.agent.run_turn("go")
    assert [r.tool for r in s.approver.seen] == ["s_echo", "s_peek"]
    assert s.policy.always_granted() == {"s_echo", "s_peek"}

    s.policy.set_always([])
    s.policy.trust_read_only = True
    s.approver.seen.clear()
    s.fake.reply_calls(("s_peek", {}), ("s_echo", {"text": "3"}))
    s.fake.reply_text("done")
    await s.agent.run_turn("again")
    assert [r.tool for r in s.approver.seen] == ["s_echo"]
    assert [c["tool"] for c in recorded_calls(s.calls)] == ["echo", "echo", "peek", "peek", "echo"]


async def test_a_hanging_call_times_out_and_the_turn_goes_on(
    setup_factory: Callable[..., Any],
) -> None:
    s: Setup = await setup_factory(McpTiming(**{**FAST.__dict__, "call_timeout": 1.0}))
    s.fake.reply_calls(("s_slow", {"seconds": 60}))
    s.fake.reply_text("It took too long.")
    result = await s.agent.run_turn("wait for it")
    assert result.ok and result.text == "It took too long."
    assert "did not answer within 1 s" in s.sent_responses()[0]["response"]["error"]


async def test_stop_cancels_a_running_mcp_call_and_the_log_stays_consistent(
    setup_factory: Callable[..., Any],
) -> None:
    s: Setup = await setup_factory()
    s.fake.reply_calls(("s_slow", {"seconds": 60}))
    turn = asyncio.create_task(s.agent.run_turn("wait forever"))
    for _ in range(600):  # until the server has received the call
        if recorded_calls(s.calls):
            break
        await asyncio.sleep(0.05)
    assert recorded_calls(s.calls)[0]["tool"] == "slow"
    assert s.agent.cancel()
    result = await turn
    assert result.cancelled
    (logged,) = s.responses()
    assert logged.response == CANCELLED
    # The server is still connected: the next turn's call runs.
    s.fake.reply_calls(("s_echo", {"text": "after stop"}))
    s.fake.reply_text("ok")
    assert (await s.agent.run_turn("again")).ok
    assert s.sent_responses()[-1]["response"]["result"] == "echo: after stop"

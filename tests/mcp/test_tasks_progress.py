"""Tasks and progress against server-everything: a task-required tool runs as a task, is
cancelled with the call, and progress reaches the manager's listeners and `koroku ask`
(the chat window's card and status row: tests/ui/test_mcp_progress.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from koroku_desktop.mcp import McpManager, McpProgress
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.conftest import everything_entry, write_config
from tests.mcp.test_cli_mcp import _responses
from tests.mcp.test_results import ready_manager

Factory = Callable[..., McpManager]


async def _everything(factory: Factory, home: Path) -> tuple[McpManager, list[McpProgress]]:
    manager = await ready_manager(factory, home, {"ev": everything_entry()})
    seen: list[McpProgress] = []
    manager.on_progress.append(seen.append)
    return manager, seen


async def test_a_task_required_tool_runs_as_a_task(
    manager_factory: Factory, koroku_home: Path
) -> None:
    manager, seen = await _everything(manager_factory, koroku_home)
    assert "ev_simulate-research-query" in {s.name for s in manager.specs()}
    response, _ = await manager.call("ev_simulate-research-query", {"topic": "green tea"})
    assert response["result"].startswith("# Research Report: green tea")
    messages = [p.message for p in seen if p.function == "ev_simulate-research-query"]
    assert "Gathering sources..." in messages and "Generating report..." in messages
    assert seen[-1].task_status == "completed"


async def test_cancelling_a_task_cancels_it_on_the_server(
    manager_factory: Factory, koroku_home: Path
) -> None:
    manager, seen = await _everything(manager_factory, koroku_home)
    call = asyncio.ensure_future(manager.call("ev_simulate-research-query", {"topic": "x"}))
    for _ in range(600):  # cancelled at its first report: four 1 s stages are still ahead
        if seen:
            break
        await asyncio.sleep(0.05)
    assert not call.done(), "the call ended before any progress was reported"
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert seen[-1].task_status == "cancelled"  # reported once tasks/cancel was answered
    response, _ = await manager.call("ev_echo", {"message": "still here"})
    assert response["result"] == "Echo: still here"


async def test_progress_of_a_plain_call_is_reported(
    manager_factory: Factory, koroku_home: Path
) -> None:
    manager, seen = await _everything(manager_factory, koroku_home)
    args = {"duration": 1, "steps": 4}
    response, _ = await manager.call("ev_trigger-long-running-operation", args)
    assert "Long running operation completed" in response["result"]
    lines = [p.line() for p in seen]
    assert lines == [f"ev trigger-long-running-operation: {n}%" for n in (25, 50, 75, 100)]


def test_ask_prints_progress_lines(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    write_config(koroku.home / "mcp.json", {"ev": everything_entry()})
    fake_gemini.reply_calls(("ev_trigger-long-running-operation", {"duration": 1, "steps": 2}))
    fake_gemini.reply_text("finished")
    result = koroku.run("ask", "--yes", "run it", timeout=120, KOROKU_MCP_WAIT="60")
    assert result.returncode == 0, result.stderr
    assert "  … ev trigger-long-running-operation: 50%\n" in result.stderr
    assert "  … ev trigger-long-running-operation: 100%\n" in result.stderr
    assert "completed" in _responses(fake_gemini)[0]["response"]["result"]

"""A dismissal written by one process is honoured by the next `koroku ask` (a real
subprocess on the same data dir) and shown by `koroku history`."""

from __future__ import annotations

from pathlib import Path

import pytest

from koroku_desktop.agent.dismissal import dismiss_remembered
from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.remembered import parse_remembered
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.agent.test_recall_by_meaning import _Yes
from tests.cli.test_recall_commands import Koroku, koroku
from tests.fakes.fixtures import TEST_API_KEY

__all__ = ["koroku"]

pytestmark = pytest.mark.slow


def _surfaced(log: SqliteEventLog) -> list[tuple[int, list[int]]]:
    found = []
    for entry in log.entries("default", limit=1000):
        if isinstance(entry, StoredEvent) and isinstance(entry.event, MessageEvent):
            for part in entry.event.parts:
                passages = parse_remembered(part)
                if passages is not None:
                    found.append((entry.seq, [p.seq for p in passages]))
    return found


async def _dismiss(home: Path, passage: int, surfaced: int) -> None:
    log = SqliteEventLog(home / "koroku.db")
    model = GeminiChatModel(TEST_API_KEY, timeout_s=5, retry_attempts=1)
    options = AgentOptions("gemini-test", 10, home, home)
    agent = Agent(log, model, ToolRegistry(None), ApprovalPolicy(), _Yes(), options)
    try:
        await dismiss_remembered(agent, passage, surfaced)
    finally:
        await model.aclose()
        log.close()


async def test_the_next_process_does_not_surface_a_dismissed_passage(koroku: Koroku) -> None:
    koroku.ok("ask", "my car is painted crimson")
    koroku.ok("chat", stdin="clear\nexit\n")
    koroku.ok("search", "--backfill")
    koroku.ok("ask", "what colour is my automobile?")
    log = SqliteEventLog(koroku.home / "koroku.db", read_only=True)
    try:
        [(surfaced, [car])] = _surfaced(log)  # surfaced while not dismissed
        await _dismiss(koroku.home, car, surfaced)

        koroku.ok("chat", stdin="clear\nexit\n")
        koroku.ok("ask", "what colour is my automobile?")
        first, *later = _surfaced(log)
        assert first == (surfaced, [car])
        # The later question may be reminded of the earlier one (every writer embeds what it
        # wrote), never of the dismissed passage.
        assert all(car not in passages for _, passages in later)
    finally:
        log.close()
    history = koroku.ok("history", "--all").stdout
    assert f"Remembered #{car} dismissed (surfaced with #{surfaced})" in history

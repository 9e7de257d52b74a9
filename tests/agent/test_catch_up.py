"""Agents sharing one log catch up before they act and take turns through the lease.

Over the in-memory log and lease board (the contract suite checks they behave like the
SQLite ones); no model is called here: only `hold_turn`, `catch_up` and the live context.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.turn_gate import TurnBusyError
from koroku_desktop.app.lazy_model import LazyGeminiModel
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import ClearedEvent, CompactionEvent, MessageEvent
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.domain.parts import FunctionCallPart, TextPart
from koroku_desktop.store.log.memory_log import InMemoryEventLog, LeaseBoard, MemoryTurnLock
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.agent.conftest import YesApprover


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def agent_on(log: InMemoryEventLog, board: LeaseBoard, front_end: str, tmp: Path) -> Agent:
    options = AgentOptions(model="m", max_tool_calls=3, workspace=tmp, data_dir=tmp)
    return Agent(
        log,
        LazyGeminiModel(None),  # never asked: these tests make no request
        ToolRegistry(None),
        ApprovalPolicy(),
        YesApprover(),
        options,
        turn_lock=MemoryTurnLock(board, front_end),
    )


def text(role: str, words: str) -> MessageEvent:
    return MessageEvent(role=role, parts=[TextPart(text=words)])  # type: ignore[arg-type]


def fresh_contents(log: InMemoryEventLog) -> list[MessageEvent]:
    live = log.load_live("default")
    return ContextView.from_tail(live.boundary, live.events).contents()


async def test_catch_up_folds_turns_and_a_compaction_made_elsewhere(tmp_path: Path) -> None:
    log, board = InMemoryEventLog(), LeaseBoard()
    window, terminal = agent_on(log, board, "app", tmp_path), agent_on(log, board, "ask", tmp_path)
    async with window.hold_turn():
        await window.append([text("user", "q1"), text("model", "a1")])
    await terminal.load()
    async with terminal.hold_turn():
        q2 = await terminal.append([text("user", "q2"), text("model", "a2")])
        await terminal.append([text("user", "q3"), text("model", "a3")])
        await terminal.append(
            [CompactionEvent(summary="S", covers_up_to_seq=q2[0].seq - 1, kept_from_seq=q2[0].seq)]
        )
    seen: list[int] = []
    window.hooks.on_event_appended.append(lambda s: seen.append(s.seq))
    folded = await window.catch_up()
    assert [s.seq for s in folded] == seen and len(folded) == 5
    assert window.view.contents() == fresh_contents(log)
    assert [c.parts[0] for c in window.view.contents()][1:] == [
        TextPart(text=t) for t in ("q2", "a2", "q3", "a3")
    ]
    assert await window.catch_up() == [], "nothing is folded twice"


async def test_a_clear_made_elsewhere_empties_the_view(tmp_path: Path) -> None:
    log, board = InMemoryEventLog(), LeaseBoard()
    a, b = agent_on(log, board, "app", tmp_path), agent_on(log, board, "chat", tmp_path)
    async with a.hold_turn():
        await a.append([text("user", "q1"), text("model", "a1")])
    async with b.hold_turn():
        await b.append([ClearedEvent()])
        await b.append([text("user", "after")])
    async with a.hold_turn():  # a turn catches up first
        assert a.view.contents() == fresh_contents(log)
        assert len(a.view.contents()) == 1


async def test_a_second_front_end_waits_for_the_turn_and_then_sees_it(tmp_path: Path) -> None:
    log, board = InMemoryEventLog(), LeaseBoard()
    terminal, window = agent_on(log, board, "ask", tmp_path), agent_on(log, board, "app", tmp_path)
    waited: list[LockHolder] = []
    window.hooks.on_turn_waiting.append(waited.append)
    order: list[str] = []
    inside = asyncio.Event()
    release = asyncio.Event()

    async def terminal_turn() -> None:
        async with terminal.hold_turn():
            order.append("terminal in")
            # A call the terminal is running: nobody may "repair" it meanwhile.
            await terminal.append(
                [MessageEvent(role="model", parts=[FunctionCallPart(name="bash")])]
            )
            inside.set()
            await release.wait()
            await terminal.append([text("user", "result"), text("model", "done")])
            order.append("terminal out")

    async def window_turn() -> None:
        await inside.wait()
        with pytest.raises(TurnBusyError) as busy:
            async with window.hold_turn(wait=False):
                pass
        assert busy.value.holder.front_end == "ask"
        async with window.hold_turn():
            order.append("window in")
            assert window.view.pending_calls() == [], "the live call was answered, not repaired"
            assert window.view.contents()[-1].parts == [TextPart(text="done")]

    waiting = asyncio.ensure_future(window_turn())
    running = asyncio.ensure_future(terminal_turn())
    await inside.wait()
    for _ in range(5):
        await asyncio.sleep(0.05)
    assert order == ["terminal in"], "the window waits"
    assert [h.front_end for h in waited] == ["ask"]
    release.set()
    await asyncio.wait_for(asyncio.gather(running, waiting), timeout=10)
    assert order == ["terminal in", "terminal out", "window in"]


async def test_a_crashed_owner_s_dangling_call_is_seen_once_its_lease_expires(
    tmp_path: Path,
) -> None:
    clock = Clock()
    log, board = InMemoryEventLog(), LeaseBoard(clock)
    crashed = MemoryTurnLock(board, "ask")  # took the lease, made a call, then died
    next_one = agent_on(log, board, "app", tmp_path)
    assert crashed.try_acquire("default", "t-crashed") is None
    log.append("default", [MessageEvent(role="model", parts=[FunctionCallPart(name="bash")])])
    with pytest.raises(TurnBusyError):
        async with next_one.hold_turn(wait=False):
            pass
    clock.now += 11  # no heartbeat: the lease has expired
    async with next_one.hold_turn(wait=False):
        assert [c.name for c in next_one.view.pending_calls()] == ["bash"]
        assert next_one.view.repair() is not None, "now the repair may be appended"


async def test_a_live_context_that_failed_to_read_is_read_again_next_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One passing database error does not leave the agent failing every later load."""
    log, board = InMemoryEventLog(), LeaseBoard()
    log.append("default", [text("user", "hello"), text("model", "hi")])
    agent = agent_on(log, board, "app", tmp_path)
    real = log.load_live
    failures = iter([OSError("disk I/O error")])

    def flaky(*args: object, **kwargs: object) -> object:
        for failure in failures:
            raise failure
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(log, "load_live", flaky)
    with pytest.raises(OSError, match="disk I/O error"):
        await agent.load()
    view = await agent.load()
    assert [m.event.parts[0].text for m in view.messages] == ["hello", "hi"]  # type: ignore[union-attr]

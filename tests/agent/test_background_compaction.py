"""Compaction in the background: turns go on while it summarises, it stands down when a newer
boundary landed, a cancel leaves nothing behind, and two "processes" never compact at once.

Each "process" is its own `SqliteEventLog` and `SqliteTurnLock` on one database file; the
summariser is a `FakeChatModel` reply that waits for the test to let it go.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from koroku_desktop.agent import loop
from koroku_desktop.agent.compaction import Compactor, compaction_key
from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    MessageEvent,
    StoredEvent,
)
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.agent.conftest import YesApprover
from tests.fakes.chat_model import FakeChatModel

GUARD_S = 30  # only so that a deadlock fails the test instead of hanging it


@dataclass
class SlowSummariser:
    """Turn requests answer at once; summariser requests wait until `release` is set."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    summaries: int = 0

    async def __call__(self, request: ModelRequest) -> str:
        if request.system_instruction != SUMMARIZER_INSTRUCTION:
            return f"answer {len(request.contents)}"
        self.entered.set()
        await self.release.wait()
        self.summaries += 1
        return f"SUMMARY {self.summaries}"


@dataclass
class Process:
    """One front end: its own log connection, lease, agent and compactor."""

    agent: Agent
    compactor: Compactor
    model: FakeChatModel
    log: SqliteEventLog


Spawn = Callable[[SlowSummariser], Process]


@pytest.fixture
def spawn(koroku_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Spawn]:
    monkeypatch.setattr(loop, "LIVE_TAIL_LIMIT", 10)  # 60 events = a "long" history
    made: list[tuple[SqliteEventLog, SqliteTurnLock]] = []
    db = koroku_home / "koroku.db"

    def make(brain: SlowSummariser) -> Process:
        log = SqliteEventLog(db)
        lock = SqliteTurnLock(db, "test")
        made.append((log, lock))
        model = FakeChatModel(brain)
        options = AgentOptions("gemini-test", 10, tmp_path, koroku_home, compact_at_tokens=2_000)
        agent = Agent(
            log, model, ToolRegistry(None), ApprovalPolicy(), YesApprover(), options, turn_lock=lock
        )
        compactor = Compactor()
        compactor.attach(agent)
        return Process(agent, compactor, model, log)

    seed = SqliteEventLog(db)
    seed.append(
        "default",
        [
            MessageEvent(role="user" if n % 2 == 0 else "model", parts=[TextPart(text=f"m{n}")])
            for n in range(60)
        ],
    )
    seed.close()
    yield make
    for log, lock in made:
        lock.close()
        log.close()


def compactions(log: SqliteEventLog) -> list[StoredEvent]:
    return [e for e in log.entries("default", kinds=["compaction"]) if isinstance(e, StoredEvent)]


def texts(request: ModelRequest) -> list[str]:
    return [p.text for c in request.contents for p in c.parts if isinstance(p, TextPart)]


async def test_a_turn_runs_while_the_compaction_summarises_and_stays_live_after_it(
    spawn: Spawn,
) -> None:
    brain = SlowSummariser()
    p = spawn(brain)
    assert (await p.agent.run_turn("first")).ok  # a long history: the compaction starts
    assert p.compactor.running
    await asyncio.wait_for(brain.entered.wait(), GUARD_S)

    # The summariser is stuck, yet the next turn gets the lease and finishes.
    second = await asyncio.wait_for(p.agent.run_turn("meanwhile"), GUARD_S)
    assert second.ok and p.compactor.running and compactions(p.log) == []
    meanwhile = next(m for m in p.agent.view.messages if "meanwhile" in texts_of(m))

    brain.release.set()
    event = await asyncio.wait_for(p.compactor.wait(), GUARD_S)
    assert isinstance(event, CompactionEvent) and event.summary == "SUMMARY 1"
    (stored,) = compactions(p.log)
    # Landed after the turn, which it leaves live: it folded only what came before it started.
    assert stored.seq > second.last_seq and event.kept_from_seq <= meanwhile.seq
    assert meanwhile in p.agent.view.messages and p.agent.view.summary == event

    assert (await p.agent.run_turn("after")).ok
    sent = texts(p.model.requests[-1])
    assert sent[0].endswith("SUMMARY 1") and "meanwhile" in sent and "m0" not in sent


def texts_of(stored: StoredEvent) -> list[str]:
    event = stored.event
    assert isinstance(event, MessageEvent)
    return [p.text for p in event.parts if isinstance(p, TextPart)]


@pytest.mark.parametrize("newer", ["clear", "compaction"])
async def test_a_newer_boundary_from_another_process_makes_it_stand_down(
    spawn: Spawn, newer: str
) -> None:
    brain = SlowSummariser()
    p = spawn(brain)
    other = spawn(SlowSummariser())
    assert (await p.agent.run_turn("first")).ok
    await asyncio.wait_for(brain.entered.wait(), GUARD_S)

    async with other.agent.hold_turn():
        if newer == "clear":
            await other.agent.append([ClearedEvent()])
        else:
            last = other.agent.view.last_seq
            done = CompactionEvent(summary="OTHER", covers_up_to_seq=last, kept_from_seq=last + 1)
            await other.agent.append([done])

    brain.release.set()
    assert await asyncio.wait_for(p.compactor.wait(), GUARD_S) is None
    assert p.compactor.last_problem is not None and "dropped" in p.compactor.last_problem
    assert [c.event.summary for c in compactions(p.log)] == (  # type: ignore[union-attr]
        ["OTHER"] if newer == "compaction" else []
    )
    view = p.agent.view  # caught up under the lease: the newer boundary rules
    assert view.summary is None if newer == "clear" else view.summary is not None
    assert view.messages == []


async def test_a_cancelled_compaction_leaves_nothing_and_the_next_process_redoes_it(
    spawn: Spawn,
) -> None:
    brain = SlowSummariser()
    p = spawn(brain)
    assert (await p.agent.run_turn("first")).ok
    await asyncio.wait_for(brain.entered.wait(), GUARD_S)
    before = p.log.entries("default", newest_first=True, limit=1)

    await p.compactor.cancel()  # like quitting the app mid-compaction

    assert not p.compactor.running
    assert p.log.entries("default", newest_first=True, limit=1) == before
    assert compactions(p.log) == []
    free = SqliteTurnLock(p.log.path, "probe")
    try:  # the compaction lease was given back
        assert free.try_acquire(compaction_key("default"), "probe") is None
    finally:
        free.close()

    fast = SlowSummariser()
    fast.release.set()
    again = spawn(fast)  # the next start
    assert await again.compactor.maybe_compact(again.agent) is not None
    event = await asyncio.wait_for(again.compactor.wait(), GUARD_S)
    assert isinstance(event, CompactionEvent) and len(compactions(again.log)) == 1


async def test_two_processes_never_compact_at_once(spawn: Spawn) -> None:
    brain = SlowSummariser()
    first = spawn(brain)
    second_brain = SlowSummariser()
    second_brain.release.set()
    second = spawn(second_brain)
    assert await first.compactor.maybe_compact(first.agent) is not None
    await asyncio.wait_for(brain.entered.wait(), GUARD_S)

    assert await second.compactor.maybe_compact(second.agent) is not None
    assert await asyncio.wait_for(second.compactor.wait(), GUARD_S) is None
    assert second.compactor.last_problem and "is compacting" in second.compactor.last_problem
    assert not second_brain.entered.is_set()  # it never asked its summariser

    brain.release.set()
    assert await asyncio.wait_for(first.compactor.wait(), GUARD_S) is not None
    assert len(compactions(first.log)) == 1

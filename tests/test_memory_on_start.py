"""Memory files are brought up to date with the log by each front end before its first turn
(`Runtime.sync_memory`), under the conversation's turn lease: front ends starting together
record a file edited while Koroku was closed exactly once."""

from __future__ import annotations

import asyncio

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.agent.memory_events import memory_path, sync_memory_files
from koroku_desktop.app.config import default_paths
from koroku_desktop.app.runtime import CONVERSATION_ID, Runtime, build_runtime
from koroku_desktop.domain.events import MemoryEditEvent, StoredEvent
from koroku_desktop.store import SqliteEventLog
from tests.test_settings_store import NoApprover

DAY = "04-03-2025"
RACERS = 4


def outside_edits() -> list[MemoryEditEvent]:
    with SqliteEventLog(default_paths().db) as log:
        return [
            e.event
            for e in log.entries(kinds=["memory_edit"], limit=1000)
            if isinstance(e, StoredEvent)
            and isinstance(e.event, MemoryEditEvent)
            and e.event.source == "outside"
        ]


def a_file_edited_while_closed(round_: int) -> None:
    """The day's file as Koroku wrote it from the log, then changed by hand."""
    paths = default_paths().ensure()
    with SqliteEventLog(paths.db) as log:
        log.append(
            CONVERSATION_ID,
            [MemoryEditEvent(day=DAY, op="append", text=f"[09:0{round_}]: from Koroku\n\n")],
        )
        sync_memory_files(log, CONVERSATION_ID, paths.home)
    file = memory_path(paths.home, DAY)
    file.write_text(file.read_text() + f"corrected by hand, round {round_}\n", encoding="utf-8")


async def start_together(runtimes: list[Runtime]) -> list[bool]:
    return list(await asyncio.gather(*(r.sync_memory() for r in runtimes)))


def race(round_: int, conversations: list[str | None]) -> None:
    """A file edited while closed, then front ends (one in each of `conversations`; None:
    the most recent) starting together: the edit is recorded once."""
    a_file_edited_while_closed(round_)
    runtimes = [
        build_runtime(NoApprover(), front_end=f"r{n}", conversation=cid)
        for n, cid in enumerate(conversations)
    ]
    try:
        assert asyncio.run(start_together(runtimes)) == [True] * len(runtimes)
    finally:
        for runtime in runtimes:
            runtime.close()
    assert len(outside_edits()) == round_ + 1


def test_front_ends_starting_together_record_an_outside_edit_once() -> None:
    for round_ in range(5):  # several rounds: each a fresh race between worker threads
        race(round_, [None] * RACERS)
        expected = f"corrected by hand, round {round_}\n"
        assert outside_edits()[-1].text.endswith(expected)
        assert memory_path(default_paths().home, DAY).read_text().endswith(expected)


def test_front_ends_in_different_conversations_record_an_outside_edit_once() -> None:
    """The memory files are every conversation's: the app in one conversation and a
    terminal in another starting together still record an outside edit once."""
    with SqliteEventLog(default_paths().ensure().db) as log:
        book = ConversationBook(log)
        others = [book.create(f"Talk {n}").id for n in range(RACERS - 1)]
    for round_ in range(5):
        race(round_, [CONVERSATION_ID, *others])


def test_building_a_runtime_leaves_the_memory_files_alone() -> None:
    """Start-up does not touch them (the app brings them up to date once its window is up)."""
    a_file_edited_while_closed(0)
    runtime = build_runtime(NoApprover())
    try:
        assert outside_edits() == []
        assert asyncio.run(runtime.sync_memory())
        assert len(outside_edits()) == 1
    finally:
        runtime.close()


def test_a_busy_conversation_skips_it_when_told_not_to_wait() -> None:
    a_file_edited_while_closed(0)
    holder, runtime = build_runtime(NoApprover(), front_end="chat"), build_runtime(NoApprover())
    try:
        assert holder.turn_lock is not None
        assert holder.turn_lock.try_acquire(CONVERSATION_ID, "running") is None
        assert asyncio.run(runtime.sync_memory(wait=False)) is False
        assert outside_edits() == []
        holder.turn_lock.release(CONVERSATION_ID)
        assert asyncio.run(runtime.sync_memory(wait=False)) is True
        assert len(outside_edits()) == 1
    finally:
        runtime.close()
        holder.close()

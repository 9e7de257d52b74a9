"""A memory files sync that cannot go on (another sync holds the files' lease, or one is
stuck) does not hold a cancel (the app quitting) for more than a few seconds: the work is
left for the next start, and said so in the log."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

import pytest

from koroku_desktop.agent import memory_events
from koroku_desktop.agent.memory_events import MEMORY_KEY, sync_memory_files_off_loop
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.store.log.memory_log import InMemoryEventLog, LeaseBoard, MemoryTurnLock
from tests.support.waits import async_wait_until


class StuckLease:
    """A `TurnLock` whose taking never answers until `unstick` (a sync stuck in it)."""

    def __init__(self) -> None:
        self.inside = threading.Event()
        self.unstick = threading.Event()

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None:
        self.inside.set()
        self.unstick.wait(30)
        return None

    def release(self, conversation_id: str) -> None:
        pass


class RefusedLease(MemoryTurnLock):
    """The app's lease; `refused` is set once the lease was found held by another."""

    refused: threading.Event

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None:
        holder = super().try_acquire(conversation_id, turn_id)
        if holder is not None:
            self.refused.set()
        return holder


async def test_a_cancel_stops_waiting_for_the_lease_another_holds_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    board = LeaseBoard()
    other = MemoryTurnLock(board, "chat")
    assert other.try_acquire(MEMORY_KEY, "syncing") is None
    app = RefusedLease(board, "app")
    app.refused = threading.Event()
    sync = asyncio.ensure_future(
        sync_memory_files_off_loop(InMemoryEventLog(), "default", tmp_path, app)
    )
    await async_wait_until(app.refused.is_set)  # it waits for the other's sync
    sync.cancel()
    with caplog.at_level(logging.WARNING):
        done, _ = await asyncio.wait([sync], timeout=memory_events.STOP_WAIT_S)
    assert done and sync.cancelled()
    assert "another process's sync holds them" in caplog.text
    assert not (tmp_path / "memory").exists()  # nothing written: the next start does it


async def test_a_cancel_leaves_a_stuck_sync_after_a_few_seconds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_events, "STOP_WAIT_S", 0.2)
    stuck = StuckLease()
    sync = asyncio.ensure_future(
        sync_memory_files_off_loop(InMemoryEventLog(), "default", tmp_path, stuck)
    )
    try:
        await async_wait_until(stuck.inside.is_set)
        sync.cancel()
        with caplog.at_level(logging.WARNING):
            done, _ = await asyncio.wait([sync], timeout=10)
        assert done and sync.cancelled()
        assert not stuck.unstick.is_set()  # left while still stuck
        assert "did not end within" in caplog.text
    finally:
        stuck.unstick.set()

"""The hub's advisory-lock lease (sync/hub_lease.py) through the TurnLock contract, against a
real PostgreSQL: each lock is another device, with its own data dir and local lease."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.sync.config import check_url
from koroku_desktop.sync.hub_lease import HubTurnLock
from tests.store.turn_lock_contract import LockFactory, TurnLockContract
from tests.support.waits import wait_until
from tests.sync.pg_server import PASSWORD


class TestHubTurnLock(TurnLockContract):
    @pytest.fixture
    def make_lock(self, tmp_path: Path, hub_url: str) -> Iterator[LockFactory]:
        address = check_url(hub_url, PASSWORD)
        made: list[HubTurnLock] = []

        def build(front_end: str) -> HubTurnLock:
            device = tmp_path / f"device-{len(made)}" / "koroku.db"
            device.parent.mkdir(parents=True)
            SqliteEventLog(device).close()
            lock = HubTurnLock(SqliteTurnLock(device, front_end), address)
            made.append(lock)
            return lock

        yield build
        for lock in made:
            lock.close()

    def test_the_other_device_is_named_and_a_dead_session_frees_the_lock(
        self, make_lock: LockFactory
    ) -> None:
        first, second = make_lock("app"), make_lock("ask")
        assert first.try_acquire("c1", "turn-1") is None
        busy = second.try_acquire("c1", "turn-2")
        assert busy is not None and busy.remote and busy.pid == os.getpid()
        assert isinstance(first, HubTurnLock)
        first.retarget(first.address, first.online)  # its session ends, as if it had died
        # The server frees the lock once that backend has exited, a moment after the close.
        wait_until(
            lambda: second.try_acquire("c1", "turn-2") is None,
            interval=0.05,
            message="the dead session's lock was never freed",
        )

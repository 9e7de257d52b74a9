"""The TurnLock contract on the local implementations (the SQLite lease row, the in-memory
board); the hub's advisory lock runs it in tests/sync/test_hub_lease_contract.py."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from koroku_desktop.store import SqliteEventLog, data_dir
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.store.log.memory_log import LeaseBoard, MemoryTurnLock
from tests.store.turn_lock_contract import Clock, ExpiringLeaseContract, LockFactory
from tests.support.waits import wait_until


class TestSqliteTurnLock(ExpiringLeaseContract):
    @pytest.fixture
    def make_lock(self, tmp_path: Path, clock: Clock) -> Iterator[LockFactory]:
        path = tmp_path / "koroku.db"
        SqliteEventLog(path).close()  # runs the migrations (turn_leases)
        made: list[SqliteTurnLock] = []

        def build(front_end: str) -> SqliteTurnLock:
            lock = SqliteTurnLock(path, front_end, ttl=10, heartbeat=3600, clock=clock)
            made.append(lock)
            return lock

        yield build
        for lock in made:
            lock.close()


class TestMemoryTurnLock(ExpiringLeaseContract):
    @pytest.fixture
    def make_lock(self, clock: Clock) -> LockFactory:
        board = LeaseBoard(clock)
        return lambda front_end: MemoryTurnLock(board, front_end, ttl=10)


def test_sqlite_heartbeat_keeps_the_lease_and_release_stops_it(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    SqliteEventLog(path).close()
    holder = SqliteTurnLock(path, "ask", ttl=0.8, heartbeat=0.1)
    other = SqliteTurnLock(path, "app", ttl=0.8, heartbeat=0.1)
    try:
        assert holder.try_acquire("c1", "t") is None
        deadline = time.monotonic() + 2.5  # three lease lengths: only heartbeats keep it
        while time.monotonic() < deadline:
            assert other.try_acquire("c1", "u") is not None
            time.sleep(0.1)
        holder.release("c1")
        assert other.try_acquire("c1", "u") is None
    finally:
        holder.close()
        other.close()


def test_sqlite_one_heartbeat_keeps_every_key_held_and_serves_again_after_close(
    tmp_path: Path,
) -> None:
    path = tmp_path / "koroku.db"
    SqliteEventLog(path).close()
    holder = SqliteTurnLock(path, "ask", ttl=0.8, heartbeat=0.1)
    other = SqliteTurnLock(path, "app", ttl=0.8, heartbeat=0.1)
    try:
        for _round in range(2):  # the second after `close`: taken and renewed again
            assert holder.try_acquire("c1", "t") is None
            assert holder.try_acquire("#memory-files", "t") is None
            deadline = time.monotonic() + 2.5  # three lease lengths: only heartbeats keep them
            while time.monotonic() < deadline:
                assert other.try_acquire("c1", "u") is not None
                assert other.try_acquire("#memory-files", "u") is not None
                time.sleep(0.1)
            holder.release("#memory-files")
            assert other.try_acquire("#memory-files", "u") is None
            other.release("#memory-files")
            holder.close()
            assert other.try_acquire("c1", "u") is None  # close gave it back
            other.release("c1")
    finally:
        holder.close()
        other.close()


def test_sqlite_lease_of_a_dead_process_on_this_host_is_free_at_once(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    SqliteEventLog(path).close()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    ghost = SqliteTurnLock(path, "ask")
    ghost.pid = int(dead.stdout)  # as if that (now finished) process had taken it
    live = SqliteTurnLock(path, "app")
    try:
        assert ghost.try_acquire("c1", "t") is None
        ghost._beats.pop("c1").set()  # its heartbeat dies with it
        assert live.try_acquire("c1", "u") is None
    finally:
        ghost.close()
        live.close()


class PausedRenewal(SqliteTurnLock):
    """A lease whose heartbeat waits at the start of each renewal until `go` (a close then
    lands between the heartbeat's reading what is held and renewing it)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "ask", ttl=10, heartbeat=0.05)
        self.entered = threading.Event()
        self.go = threading.Event()
        self.renewed = threading.Event()

    def _renew(self, conversation_id: str) -> bool:
        self.entered.set()
        self.go.wait(30)
        try:
            return super()._renew(conversation_id)
        finally:
            self.renewed.set()


def test_sqlite_a_renewal_racing_close_does_not_reopen_the_database(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    SqliteEventLog(path).close()
    holder = PausedRenewal(path)
    try:
        assert holder.try_acquire("c1", "t") is None
        assert holder.entered.wait(30)  # the heartbeat is about to renew "c1"
        holder.close()
        holder.go.set()
        assert holder.renewed.wait(30)
        assert holder._dir is None  # closed stays closed: no data dir opened again
        assert (path.resolve(), False) not in data_dir._SHARED
    finally:
        holder.go.set()
        holder.close()


def test_sqlite_the_heartbeat_outlives_an_unexpected_error(tmp_path: Path) -> None:
    """A renewal failing with anything (not only an SQLite error) is logged and retried: the
    one heartbeat thread of the instance must not end while a lease is held."""
    path = tmp_path / "koroku.db"
    SqliteEventLog(path).close()
    failed = threading.Event()

    def clock() -> float:
        if threading.current_thread() is not threading.main_thread() and not failed.is_set():
            failed.set()
            raise RuntimeError("a clock that failed once")
        return time.time()

    holder = SqliteTurnLock(path, "ask", ttl=10, heartbeat=0.05, clock=clock)
    try:
        assert holder.try_acquire("c1", "t") is None
        first = expiry(path, "c1")
        assert failed.wait(30)
        wait_until(lambda: expiry(path, "c1") > first, timeout=30)  # renewed again
    finally:
        holder.close()


def expiry(path: Path, key: str) -> float:
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT expires_at FROM turn_leases WHERE conversation_id = ?", (key,)
        ).fetchone()
    return float(row[0])

"""The TurnLock contract on every implementation (the SQLite lease row, the in-memory board):
one holder per conversation, others told who holds it, release and expiry free it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.store.log.memory_log import LeaseBoard, MemoryTurnLock

Lock = SqliteTurnLock | MemoryTurnLock


class Clock:
    """A settable clock shared by every lock of a test."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


LockFactory = Callable[[str], Lock]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["sqlite", "memory"])
def make_lock(
    request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> Iterator[LockFactory]:
    made: list[Lock] = []
    if request.param == "sqlite":
        path = tmp_path / "koroku.db"
        SqliteEventLog(path).close()  # runs the migrations (turn_leases)

        def build(front_end: str) -> Lock:
            lock = SqliteTurnLock(path, front_end, ttl=10, heartbeat=3600, clock=clock)
            made.append(lock)
            return lock
    else:
        board = LeaseBoard(clock)

        def build(front_end: str) -> Lock:
            lock = MemoryTurnLock(board, front_end, ttl=10)
            made.append(lock)
            return lock

    yield build
    for lock in made:
        if isinstance(lock, SqliteTurnLock):
            lock.close()


def test_one_holder_at_a_time_and_the_other_is_told_who(make_lock: LockFactory) -> None:
    terminal, window = make_lock("ask"), make_lock("app")
    assert terminal.try_acquire("c1", "turn-1") is None
    holder = window.try_acquire("c1", "turn-2")
    assert holder is not None
    assert holder.front_end == "ask" and holder.turn_id == "turn-1"
    assert holder.describe() == "the terminal"
    assert window.try_acquire("c2", "turn-3") is None, "another conversation is free"
    terminal.release("c1")
    assert window.try_acquire("c1", "turn-2") is None
    assert terminal.try_acquire("c1", "turn-4") is not None


def test_release_by_a_non_holder_changes_nothing(make_lock: LockFactory) -> None:
    a, b = make_lock("chat"), make_lock("app")
    assert a.try_acquire("c1", "t") is None
    b.release("c1")
    assert b.try_acquire("c1", "u") is not None


def test_a_lease_not_renewed_expires(make_lock: LockFactory, clock: Clock) -> None:
    crashed, next_one = make_lock("ask"), make_lock("app")
    assert crashed.try_acquire("c1", "t") is None
    clock.now += 9
    assert next_one.try_acquire("c1", "u") is not None
    clock.now += 2  # past the 10 s lease
    assert next_one.try_acquire("c1", "u") is None


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

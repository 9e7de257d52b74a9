"""The TurnLock contract, as base classes: subclass one per implementation and give it a
`make_lock` fixture that builds one more lock on the same shared resource (a file, a board,
a hub), as another process or device would hold it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import pytest

from koroku_desktop.domain.lease import LockHolder


class Lock(Protocol):
    """What the contract exercises (the agent's `TurnLock` port)."""

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None: ...

    def release(self, conversation_id: str) -> None: ...


LockFactory = Callable[[str], Lock]


class Clock:
    """A settable clock shared by every lock of a test."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class TurnLockContract:
    """One holder per conversation; others are told who holds it; release frees it."""

    @pytest.fixture
    def clock(self) -> Clock:
        return Clock()

    @pytest.fixture
    def make_lock(self) -> LockFactory:
        raise NotImplementedError("each implementation's suite builds its locks")

    def test_one_holder_at_a_time_and_the_other_is_told_who(self, make_lock: LockFactory) -> None:
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

    def test_release_by_a_non_holder_changes_nothing(self, make_lock: LockFactory) -> None:
        a, b = make_lock("chat"), make_lock("app")
        assert a.try_acquire("c1", "t") is None
        b.release("c1")
        assert b.try_acquire("c1", "u") is not None

    def test_a_released_turn_can_be_taken_again_by_its_holder(self, make_lock: LockFactory) -> None:
        a, b = make_lock("chat"), make_lock("app")
        for turn in ("t1", "t2", "t3"):
            assert a.try_acquire("c1", turn) is None
            busy = b.try_acquire("c1", "u")
            assert busy is not None and busy.turn_id == turn
            a.release("c1")
        assert b.try_acquire("c1", "u") is None


class ExpiringLeaseContract(TurnLockContract):
    """For leases with a time to live (the SQLite row, the in-memory board): `make_lock`
    gives them a 10 s lease on the test's `clock`."""

    def test_a_lease_not_renewed_expires(self, make_lock: LockFactory, clock: Clock) -> None:
        crashed, next_one = make_lock("ask"), make_lock("app")
        assert crashed.try_acquire("c1", "t") is None
        clock.now += 9
        assert next_one.try_acquire("c1", "u") is not None
        clock.now += 2  # past the 10 s lease
        assert next_one.try_acquire("c1", "u") is None

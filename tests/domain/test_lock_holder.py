"""How a turn's holder is named in waiting lines: a local front end, another device's, and a
holder nobody could read (never "(pid 0)")."""

from __future__ import annotations

from koroku_desktop.agent.turn_gate import TurnBusyError
from koroku_desktop.domain.lease import LockHolder


def test_a_local_holder_is_named_with_its_pid() -> None:
    holder = LockHolder("o", "chat", "laptop", 42, "t", 0.0)
    assert holder.where() == "the terminal (pid 42)"
    assert str(TurnBusyError(holder)) == "a turn is running in the terminal (pid 42)"


def test_another_devices_holder_is_named_with_its_host() -> None:
    holder = LockHolder("o", "app", "desktop", 7, "t", 0.0, remote=True)
    assert holder.location() == "the chat window on desktop"
    assert holder.where() == "the chat window on desktop (pid 7)"


def test_an_unknown_pid_is_left_out() -> None:
    holder = LockHolder("hub", "another device", "", 0, "", 0.0, remote=True)
    assert holder.where() == "another device"
    assert str(TurnBusyError(holder)) == "a turn is running in another device"

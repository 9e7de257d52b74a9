"""The resume signal the task scheduler re-arms on: logind's `PrepareForSleep` on a private
bus (a stand-in login1 owning the name there), heard by the real `ResumeWatch`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from jeepney import Message

from koroku_desktop.ui.resume_watch import ResumeWatch
from tests.support.waits import async_wait_until

LOGIN1 = """
import sys
from jeepney import DBusAddress, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection
conn = open_dbus_connection(bus="SESSION")
assert conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.login1", 4)).body[0] == 1
print("ready", flush=True)
manager = DBusAddress("/org/freedesktop/login1", interface="org.freedesktop.login1.Manager")
for line in sys.stdin:
    conn.send(new_signal(manager, "PrepareForSleep", "b", (line.strip() == "sleep",)))
    print("sent", flush=True)
"""


@pytest.fixture
def login1(private_bus: str) -> Iterator[subprocess.Popen[str]]:
    """The stand-in login1: a line `sleep` or `wake` on its stdin sends the signal."""
    proc = subprocess.Popen(
        [sys.executable, "-c", LOGIN1],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": private_bus},
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield proc
    proc.kill()
    proc.wait()


async def test_waking_from_a_suspend_is_reported_and_going_to_sleep_is_not(
    login1: subprocess.Popen[str],
) -> None:
    assert login1.stdin is not None and login1.stdout is not None
    woke: list[int] = []
    watch = ResumeWatch(lambda: woke.append(1), bus="SESSION")
    heard: list[Message] = []  # every signal the watch was handed, before it decides
    decide = watch._signal

    def hear(message: Message) -> None:
        heard.append(message)
        decide(message)

    watch._signal = hear  # type: ignore[method-assign]
    try:
        assert await watch.start()
        for what in ("sleep", "wake", "sleep", "wake"):
            login1.stdin.write(what + "\n")
            login1.stdin.flush()
            assert login1.stdout.readline().strip() == "sent"
        await async_wait_until(lambda: len(heard) == 4)  # all four decided: woke is final
    finally:
        await watch.close()
    assert woke == [1, 1]


async def test_without_a_bus_the_watch_says_it_cannot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/nonexistent-koroku-test")
    watch = ResumeWatch(lambda: None, bus="SESSION")
    assert not await watch.start()

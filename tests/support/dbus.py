"""A private D-Bus session bus per test (`dbus-daemon --session`), and the fake notification
service on it: what the portal and notification tests talk to instead of the desktop's bus."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

FAKES = Path(__file__).resolve().parents[1] / "fakes"
PERSON = DBusAddress(
    "/org/freedesktop/Notifications",
    bus_name="org.freedesktop.Notifications",
    interface="org.koroku.FakeNotifications",
)
"""The fake notification service's test interface: the person's side."""


@pytest.fixture
def private_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private session bus (dbus-daemon --session), its address set for this test only."""
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        pytest.skip("dbus-daemon is not installed (Debian package dbus-daemon)")
    proc = subprocess.Popen(
        [daemon, "--session", "--print-address", "--nofork"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    try:
        yield address
    finally:
        proc.kill()
        proc.wait()


@dataclass
class FakeNotifications:
    """The fake notification service's record: one dict per `Notify` call, in order."""

    record: Path

    def calls(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line]

    def act(self, member: str, *args: object) -> None:
        """Act at a notification as the person would: `Invoke(id, action_key)` (a click on
        the notification itself is the action `default`) or `Close(id)`."""
        signature = "us" if member == "Invoke" else "u"
        call = new_method_call(PERSON, member, signature, args)
        with open_dbus_connection(bus="SESSION") as conn:
            conn.send_and_get_reply(call, timeout=5)


@pytest.fixture
def fake_notifications(private_bus: str, tmp_path: Path) -> Iterator[FakeNotifications]:
    """tests/fakes/fake_notifications.py running on the private session bus."""
    record = tmp_path / "notifications.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(FAKES / "fake_notifications.py"), str(record)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": private_bus},
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    try:
        yield FakeNotifications(record)
    finally:
        proc.kill()
        proc.wait()

"""The quick-ask shortcut through the desktop portal's GlobalShortcuts, against a fake portal
on a private D-Bus session bus started by the test itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.ui import portal_shortcuts
from koroku_desktop.ui.app import Desktop
from tests.ui.conftest import run

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "fake_portal.py"


@pytest.fixture
def fake_portal(private_bus: str, tmp_path: Path) -> Iterator[Path]:
    """The fake portal on the private bus; yields the file it records its calls in."""
    record = tmp_path / "portal.jsonl"
    fake = subprocess.Popen(
        [sys.executable, str(FAKE), str(record)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": private_bus},
    )
    try:
        assert fake.stdout is not None and fake.stdout.readline().strip() == "ready"
        yield record
    finally:
        fake.kill()
        fake.wait()


def test_the_app_binds_the_shortcut_and_its_activation_opens_the_popup(
    fake_portal: Path, desktop: Desktop, qtbot: QtBot
) -> None:
    qtbot.waitUntil(lambda: desktop.global_shortcut.bound is not None, timeout=10000)
    qtbot.waitUntil(desktop.popup.isVisible, timeout=5000)
    assert "BindShortcuts" in fake_portal.read_text()


def test_without_a_portal_there_is_no_global_shortcut(
    qloop: qasync.QEventLoop, qtbot: QtBot, private_bus: str
) -> None:
    assert run(qtbot, portal_shortcuts.register(lambda: None, "Ctrl+Alt+Space")) is None


def test_the_shortcut_is_bound_through_the_portal_and_opens_quick_ask(
    qloop: qasync.QEventLoop, qtbot: QtBot, private_bus: str, tmp_path: Path
) -> None:
    record = tmp_path / "portal.jsonl"
    fake = subprocess.Popen(
        [sys.executable, str(FAKE), str(record)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": private_bus},
    )
    try:
        assert fake.stdout is not None and fake.stdout.readline().strip() == "ready"
        fired: list[bool] = []
        shortcut = run(
            qtbot, portal_shortcuts.register(lambda: fired.append(True), "Ctrl+Alt+Space")
        )
        assert shortcut is not None and shortcut.session is not None
        assert shortcut.trigger == "Ctrl+Alt+Space"
        qtbot.waitUntil(lambda: bool(fired), timeout=5000)
        calls = [json.loads(line) for line in record.read_text().splitlines()]
        assert [c["member"] for c in calls] == ["CreateSession", "BindShortcuts"]
        assert "quick-ask" in calls[1]["body"] and "CTRL+ALT+space" in calls[1]["body"]
        run(qtbot, shortcut.close())
    finally:
        fake.kill()
        fake.wait()


def test_triggers_in_the_portals_syntax() -> None:
    assert portal_shortcuts.portal_trigger("Ctrl+Alt+Space") == "CTRL+ALT+space"
    assert portal_shortcuts.portal_trigger("Meta+Shift+K") == "LOGO+SHIFT+K"

"""Sync in the desktop app: its state in the chat window's status bar, the Settings group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QLineEdit, QStyle, QStyleOptionFrame
from pytestqt.qtbot import QtBot

from tests.fakes.gemini_server import FakeGemini
from tests.support.keyring_memory import MemoryKeyring
from tests.support.waits import settle
from tests.sync.pg_server import PASSWORD, free_port
from tests.ui.conftest import running_desktop
from tests.ui.screenshots import save_screenshot


def test_an_unreachable_hub_shows_offline_since_in_the_status_bar(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KOROKU_SYNC_URL", f"postgresql://me@127.0.0.1:{free_port()}/hub")
    with running_desktop(qtbot) as desk:
        label = desk.window.sync_label
        qtbot.waitUntil(lambda: label.text().startswith("Sync: offline since"), timeout=20_000)
        assert label.isVisible()
        save_screenshot(desk.window, "chat-sync-offline")


def test_a_refused_hub_url_shows_as_a_sync_error_in_the_status_bar(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KOROKU_SYNC_URL", "postgresql://me@hub.example.org/koroku")
    with running_desktop(qtbot) as desk:
        label = desk.window.sync_label
        qtbot.waitUntil(lambda: label.text().startswith("Sync: error: refusing"), timeout=5_000)
        assert label.text().endswith("…") and "without TLS" in label.toolTip()
        save_screenshot(desk.window, "chat-sync-refused")


def test_without_a_hub_there_is_no_sync_state(desktop: object) -> None:
    window = desktop.window  # type: ignore[attr-defined]
    assert not window.sync_label.isVisible()
    assert desktop.runtime.sync is None  # type: ignore[attr-defined]


def test_settings_refuse_a_remote_hub_without_tls_and_keep_the_password_out_of_files(
    desktop: object, qtbot: QtBot
) -> None:
    dialog = desktop.show_settings()  # type: ignore[attr-defined]
    group = dialog.sync
    assert "The hub holds the same data" in group.findChildren(type(group.note))[-1].text()
    group.url.setText("postgresql://me@hub.example.org/koroku")
    dialog.save_button.click()
    assert "without TLS" in group.note.text()
    settings_file = desktop.runtime.paths.settings_file  # type: ignore[attr-defined]
    stored = json.loads(settings_file.read_text()) if settings_file.exists() else {}
    assert stored.get("sync_url", "") == ""
    group.password.setText("hunter2-secret")
    group.store_button.click()  # tests have no keyring: refused, and the field is cleared
    assert group.note.text().startswith("Not stored")
    assert group.password.text() == ""
    group.url.setText(f"postgresql://me@localhost:{free_port()}/koroku")
    dialog.save_button.click()
    stored = json.loads(settings_file.read_text())
    assert stored["sync_url"] == group.url.text()
    assert "hunter2" not in settings_file.read_text()
    # Saved, the URL is in use at once (nothing listens there): the status bar says so.
    label = desktop.window.sync_label  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: label.text().startswith("Sync: offline since"), timeout=20_000)
    dialog.show()
    save_screenshot(group, "settings-sync")


@pytest.mark.timeout(300)
def test_a_refused_hub_password_is_shown_and_storing_the_right_one_brings_sync_back(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    hub_url: str,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KOROKU_SYNC_URL", hub_url)
    monkeypatch.setenv("PGPASSWORD", "not-the-password")
    with running_desktop(qtbot) as desk:
        label = desk.window.sync_label
        qtbot.waitUntil(lambda: "the hub refused the login" in label.text(), timeout=30_000)
        assert "not-the-password" not in label.text()
        save_screenshot(desk.window, "chat-sync-password-refused")
        dialog = desk.show_settings()
        assert "the hub refused the login" in dialog.sync.state.text()
        save_screenshot(dialog.sync, "settings-sync-password-refused")
        dialog.sync.password.setText(PASSWORD)
        dialog.sync.store_button.click()  # to the keyring; sync tries again at once
        assert dialog.sync.note.text() == "Password stored in your OS keyring."
        qtbot.waitUntil(lambda: label.text() == "Sync: up to date", timeout=30_000)
        # The open dialog follows the state too.
        qtbot.waitUntil(lambda: dialog.sync.state.text() == "Sync: up to date", timeout=5_000)
        dialog.close()


def _text_room(field: QLineEdit) -> int:
    """How wide a text `field` shows without cutting it (its contents less Qt's margins)."""
    option = QStyleOptionFrame()
    field.initStyleOption(option)
    contents = field.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, field)
    margins = field.textMargins()
    return contents.width() - margins.left() - margins.right() - 2 * 2  # Qt's own margin


def test_the_hub_url_field_shows_its_whole_example_and_explains_itself(desktop: object) -> None:
    """The hub URL's placeholder reads whole in a narrow dialog (it ended in "…"), and the
    field's tooltip gives the full example and what the URL holds."""
    dialog = desktop.show_settings()  # type: ignore[attr-defined]
    field = dialog.sync.url
    for width in (900, 400):
        dialog.resize(width, 760)
        settle()
        save_screenshot(dialog.sync, f"settings-sync-url-{width}")
        for box in (field, dialog.sync.password):  # the password's too (it ended in "…")
            need = box.fontMetrics().horizontalAdvance(box.placeholderText())
            assert need <= _text_room(box), f"at {width} px a placeholder is cut ({need} px)"
    assert "keyring" in dialog.sync.password.toolTip()
    tip = field.toolTip()
    assert "postgresql://me@hub.example.org:5432/koroku?sslmode=require" in tip
    assert "keyring" in tip and "TLS" in tip
    dialog.close()

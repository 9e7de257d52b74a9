"""The first run: the setup card without a key (a real in-memory keyring), and the welcome."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_server import FakeGemini
from tests.support.keyring_memory import MemoryKeyring
from tests.support.waits import settle
from tests.ui.conftest import run, running_desktop
from tests.ui.helpers import rows, texts, type_and_send
from tests.ui.screenshots import save_screenshot
from tests.ui.test_settings import visible_texts

SECRET = "AIzaSy-first-run-secret-0123456789"


@pytest.fixture
def keyless(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Desktop]:
    """The app on a fresh data dir with no API key anywhere (the fake server still running)."""
    monkeypatch.delenv("GEMINI_API_KEY")
    with running_desktop(qtbot) as desk:
        yield desk


def test_setup_card_without_a_key_goes_once_one_is_stored(
    memory_keyring: MemoryKeyring, keyless: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    card = keyless.setup_card
    assert card is not None and card.isVisible()
    assert "aistudio.google.com/apikey" in " ".join(visible_texts(card))
    assert not card.keyring_note.isVisibleTo(card) and card.field.isEnabled()
    # Everything that needs no key works: history and settings open.
    assert keyless.show_history().isVisible()
    assert "No API key is set" in keyless.show_settings().key.source.text()
    keyless.settings_dialog.close()  # type: ignore[union-attr]
    theme.apply(keyless.app, "light")
    if keyless.welcome is not None:
        keyless.welcome.hide()
    settle()
    assert card.isVisible()
    save_screenshot(keyless.window, "setup-card")
    type_and_send(qtbot, keyless.window.input, SECRET)
    assert "setup card" in keyless.window.notice.text()
    assert keyless.window.focusWidget() is card.field
    qtbot.keyClicks(card.field, SECRET)  # type: ignore[no-untyped-call]
    assert run(qtbot, card.store())
    assert memory_keyring.store[("koroku", "api_key")] == SECRET
    qtbot.waitUntil(lambda: keyless.setup_card is None)
    qtbot.waitUntil(lambda: not card.isVisible() if not _deleted(card) else True)
    assert keyless.runtime.model.has_key and keyless.runtime.api_key is not None
    assert keyless.runtime.api_key.source == "keyring"
    # It takes effect without a restart: the next message reaches Gemini.
    fake_gemini.reply_text("hello from Gemini")
    type_and_send(qtbot, keyless.window.input, "hi")
    qtbot.waitUntil(
        lambda: "hello from Gemini" in texts(keyless.window.model, "model"), timeout=15000
    )
    dialog = keyless.show_settings()
    assert "OS keyring" in dialog.key.source.text()
    for window in (keyless.window, dialog, keyless.show_history()):
        assert all(SECRET not in t for t in visible_texts(window))
    keyless.settings_dialog.close()  # type: ignore[union-attr]


def _deleted(widget: object) -> bool:
    import shiboken6

    return not shiboken6.isValid(widget)


def test_setup_card_says_so_when_there_is_no_keyring(keyless: Desktop, qtbot: QtBot) -> None:
    card = keyless.setup_card
    assert card is not None
    assert card.keyring_note.isVisibleTo(card) and "GEMINI_API_KEY" in card.keyring_note.text()
    # Honest: no field that looks usable, nothing claiming the key goes into a keyring.
    assert not card.entry.isVisibleTo(card) and not card.field.isEnabled()
    assert card.field.focusPolicy() == Qt.FocusPolicy.NoFocus
    assert not any("kept in your OS keyring" in t for t in visible_texts(card))
    theme.apply(keyless.app, "light")
    save_screenshot(keyless.window, "setup-card-no-keyring")
    # A key typed (or pasted) into the message box anyway is never sent, nor recallable.
    window = keyless.window
    type_and_send(qtbot, window.input, SECRET)
    assert window.notice.isVisible() and "not sent" in window.notice.text()
    assert "GEMINI_API_KEY" in window.notice.text()
    assert SECRET not in window.input.history and not rows(window.model, "user")
    # A plain message with no key points to the setup card instead of failing.
    type_and_send(qtbot, window.input, "hello?")
    assert "needs a Gemini API key" in window.notice.text()
    assert window.input.toPlainText() == "hello?" and not rows(window.model, "user")
    assert window.failure() is None
    assert all(
        SECRET not in e.event.model_dump_json() for e in keyless.runtime.log.entries("default")
    )
    card.field.setText("typed anyway")
    assert run(qtbot, card.store()) is False
    assert "not stored" in card.problem.text() and "GEMINI_API_KEY" in card.problem.text()
    assert not list(keyless.runtime.paths.home.rglob("*typed*"))


def test_the_settings_dialog_stores_a_key_in_the_keyring(
    memory_keyring: MemoryKeyring, keyless: Desktop, qtbot: QtBot
) -> None:
    dialog = keyless.show_settings()
    dialog.key.field.setText(SECRET)
    assert run(qtbot, dialog.key.store())
    assert dialog.key.field.text() == ""
    assert "OS keyring (MemoryKeyring)" in dialog.key.source.text()
    qtbot.waitUntil(lambda: keyless.setup_card is None)
    assert all(SECRET not in t for t in visible_texts(dialog))
    dialog.close()


def test_welcome_on_the_very_first_start_only(
    keyless: Desktop, qtbot: QtBot, qapp: QApplication
) -> None:
    welcome = keyless.welcome
    assert welcome is not None and welcome.isVisible()
    text = welcome.text()
    assert "tray" in text and "koroku quick-ask" in text and "Ctrl+Alt+Space" in text
    assert str(keyless.runtime.paths.home) in text
    assert keyless.runtime.settings.welcomed
    assert '"welcomed": true' in keyless.runtime.paths.settings_file.read_text()
    theme.apply(qapp, "light")
    if keyless.setup_card is not None:
        keyless.setup_card.hide()
    settle()
    assert welcome.isVisible()
    save_screenshot(keyless.window, "welcome-card")
    welcome.ok_button.click()
    assert not welcome.isVisible()
    second = Desktop(qapp, keyless.paths, use_tray=False)
    try:
        assert second.welcome is None
    finally:
        second.runtime.close()
        second.window.deleteLater()
        second.popup.deleteLater()

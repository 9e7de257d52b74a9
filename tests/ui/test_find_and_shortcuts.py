"""Find in the conversation (Ctrl+F), the keyboard-shortcut sheet (Ctrl+/, F1, the header
button; the README's table is the sheet), and Esc stopping the running turn."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.shortcut_sheet import SHORTCUTS, readme_table
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import rows, texts, type_and_send

README = Path(__file__).resolve().parents[2] / "README.md"


def _answered(desktop: Desktop, fake: FakeGemini, qtbot: QtBot, question: str, answer: str) -> None:
    fake.reply_text(answer)
    type_and_send(qtbot, desktop.window.input, question)
    qtbot.waitUntil(
        lambda: not desktop.bridge.busy and answer in texts(desktop.window.model, "model"),
        timeout=30000,
    )


def test_find_goes_through_the_matches_and_esc_gives_the_keys_back(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = desktop.window
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    _answered(desktop, fake_gemini, qtbot, "What is a Kiwi?", "A kiwi is a bird from New Zealand.")
    _answered(desktop, fake_gemini, qtbot, "And a tui?", "Another bird, with a white tuft.")
    qtbot.keyClick(window.input, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.find_bar
    assert bar.isVisible() and bar.field.hasFocus()
    qtbot.keyClicks(bar.field, "kiwi")
    qtbot.waitUntil(lambda: bar.count_label.text() == "2 of 2")  # the newest match first
    items = window.model.items()
    assert [items[r].text for r in bar.rows] == [
        "What is a Kiwi?",
        "A kiwi is a bird from New Zealand.",
    ]
    assert window.view.delegate.find_text == "kiwi" and window.view.delegate.find_row == bar.rows[1]
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.count_label.text() == "1 of 2" and window.view.delegate.find_row == bar.rows[0]
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count_label.text() == "2 of 2"
    bar.field.setText("nothing like this")
    qtbot.waitUntil(lambda: bar.count_label.text() == "No match")
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible() and window.view.delegate.find_text == ""
    qtbot.waitUntil(window.input.hasFocus)


def test_the_shortcut_sheet_is_the_readmes_table_and_every_key_is_bound(
    desktop: Desktop, qtbot: QtBot
) -> None:
    assert readme_table() in README.read_text(), "the README's table is the sheet"
    window = desktop.window
    bound = {s.key().toString() for s in window.findChildren(QShortcut)}
    for keys in (
        "Ctrl+L",
        "Ctrl+F",
        "Ctrl+/",
        "F1",
        "Ctrl+Shift+R",
        "Ctrl+Shift+E",
        "Ctrl+N",
        "Ctrl+B",
    ):
        assert QKeySequence(keys).toString() in bound, keys
    qtbot.keyClick(window.input, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    sheet = window.shortcut_sheet
    assert sheet is not None
    qtbot.waitExposed(sheet)
    shown = [label.text() for label in sheet.findChildren(QLabel)]
    for keys, what in SHORTCUTS:
        assert f"<b>{keys}</b>" in shown and what in shown
    sheet.reject()
    qtbot.waitUntil(window.input.hasFocus)
    window.header.shortcuts_button.click()
    assert sheet.isVisible()
    sheet.reject()


def test_esc_in_the_message_box_stops_the_running_turn(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = desktop.window
    fake_gemini.delay(5).reply_text("too late")
    type_and_send(qtbot, window.input, "take your time")
    qtbot.waitUntil(lambda: window.model.status == "Thinking…", timeout=30000)
    qtbot.keyClick(window.input, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=30000)
    notices = [i for i in rows(window.model, "turn_notice") if i.tool == "stopped"]
    assert notices, "the turn is marked Stopped"
    assert window.input.hasFocus()


def test_a_queued_message_can_be_taken_back_or_removed(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    from PySide6.QtWidgets import QToolButton

    window = desktop.window
    fake_gemini.delay(2).reply_text("the first answer")
    fake_gemini.reply_text("the third answer")
    type_and_send(qtbot, window.input, "first")
    type_and_send(qtbot, window.input, "second, with a typo")
    type_and_send(qtbot, window.input, "third")
    qtbot.waitUntil(lambda: len(window.queued_strip.chips) == 2)
    edit, _ = window.queued_strip.chips[0].findChildren(QToolButton)
    window.input.setPlainText("half typed")
    edit.click()
    assert window.input.toPlainText() == "half typed\n\nsecond, with a typo"
    qtbot.waitUntil(lambda: desktop.bridge.queued == ["third"])
    _, remove = window.queued_strip.chips[0].findChildren(QToolButton)
    remove.click()
    qtbot.waitUntil(lambda: desktop.bridge.queued == [])
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=30000)
    said = [i.text for i in rows(window.model, "user")]
    assert said == ["first"], "neither taken-back message was sent"
    assert window.input.hasFocus()


def test_the_model_picker_beside_send_sets_the_model(desktop: Desktop, qtbot: QtBot) -> None:
    picker = desktop.window.composer.model_picker
    assert picker.isVisible() and picker.currentText() == desktop.runtime.settings.model
    index = picker.findText("gemini-2.5-pro")
    picker.setCurrentIndex(index)
    picker.activated.emit(index)
    assert desktop.runtime.settings.model == "gemini-2.5-pro"
    assert desktop.runtime.agent.options.model == "gemini-2.5-pro", "the next turn uses it"
    assert desktop.window.model_label.text() == "gemini-2.5-pro"
    stored = (desktop.paths.home / "settings.json").read_text()
    assert '"model": "gemini-2.5-pro"' in stored

"""The keyboard never loses text: focus after every button, approval keys from anywhere."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.window import ChatWindow
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import (
    click_row_action,
    quick_ask_into_the_chat,
    rows,
    shown_popup,
    texts,
    type_and_send,
)


def _focus_elsewhere(window: ChatWindow) -> None:
    window.settings_button.setFocus()
    assert window.focusWidget() is not window.input


def _input_has_focus(window: ChatWindow) -> bool:
    return window.focusWidget() is window.input


def test_focus_returns_to_the_input_after_got_it_and_header_buttons(
    desktop: Desktop, qtbot: QtBot
) -> None:
    window = desktop.window
    welcome = desktop.welcome
    assert welcome is not None
    welcome.ok_button.setFocus()
    qtbot.mouseClick(welcome.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _input_has_focus(window))
    for button in (window.thoughts_button, window.thoughts_button, window.history_button):
        _focus_elsewhere(window)
        button.setFocus()
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: _input_has_focus(window))
    _focus_elsewhere(window)
    window.clear_button.click()
    box = window.findChild(QMessageBox)
    assert box is not None
    qtbot.waitUntil(box.isVisible)
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: _input_has_focus(window))


def test_focus_returns_to_the_input_after_stop_and_retry(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = desktop.window
    fake_gemini.delay(5).reply_text("too late")
    type_and_send(qtbot, window.input, "take your time")
    qtbot.waitUntil(window.stop_button.isVisible, timeout=10000)
    window.stop_button.setFocus()
    qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.stop_button.isVisible(), timeout=10000)
    qtbot.waitUntil(lambda: _input_has_focus(window))
    fake_gemini.reset()
    fake_gemini.fail(400, times=1, message="bad request for the test")
    type_and_send(qtbot, window.input, "again")
    qtbot.waitUntil(lambda: window.failure() is not None, timeout=10000)
    fake_gemini.reply_text("recovered")
    _focus_elsewhere(window)
    notice = rows(window.model, "turn_notice")[-1]
    click_row_action(qtbot, window.view, notice, "retry")
    qtbot.waitUntil(lambda: _input_has_focus(window))
    qtbot.waitUntil(lambda: "recovered" in texts(window.model, "model"), timeout=10000)


def _waiting_card(desktop: Desktop, qtbot: QtBot):  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: bool(desktop.window.approvals.cards()), timeout=10000)
    return desktop.window.approvals.cards()[0]


def test_ctrl_enter_allows_from_the_message_box(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.reply_calls(("bash", {"command": "echo hi"}))
    fake_gemini.reply_text("Ran it.")
    window = desktop.window
    type_and_send(qtbot, window.input, "run it")
    _waiting_card(desktop, qtbot)
    window.input.setFocus()
    qtbot.keyClick(window.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "Ran it." in texts(window.model, "model"), timeout=10000)
    assert rows(window.model, "tool")[0].status == "ok"
    assert window.input.toPlainText() == "" and window.input.history == ["run it"]


def test_esc_denies_from_the_conversation_and_in_the_popup(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.reply_calls(("bash", {"command": "echo one"}))
    fake_gemini.reply_text("Left it.")
    window = desktop.window
    type_and_send(qtbot, window.input, "run one")
    _waiting_card(desktop, qtbot)
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: "Left it." in texts(window.model, "model"), timeout=10000)
    assert rows(window.model, "tool")[0].result == {"error": "denied by the user"}
    # The popup: its own stack answers, and Esc denies instead of hiding the popup.
    quick_ask_into_the_chat(desktop)
    popup = shown_popup(desktop, qtbot)
    fake_gemini.reply_calls(("bash", {"command": "echo two"}))
    fake_gemini.reply_text("Denied again.")
    popup.ask("run two")
    qtbot.waitUntil(lambda: bool(popup.approvals.cards()), timeout=10000)
    popup.input.setFocus()
    qtbot.keyClick(popup.input, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: "Denied again." in texts(window.model, "model"), timeout=10000)
    assert popup.isVisible()


def test_raising_the_window_with_an_approval_waiting_focuses_the_card(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.reply_calls(("bash", {"command": "echo raised"}))
    fake_gemini.reply_text("ok")
    window = desktop.window
    type_and_send(qtbot, window.input, "run")
    card = _waiting_card(desktop, qtbot)
    window.hide()
    window.input.setFocus()
    desktop.show_chat()
    qtbot.waitUntil(lambda: window.focusWidget() is card)  # the card, not into the command
    card.allow_once.click()
    qtbot.waitUntil(lambda: "ok" in texts(window.model, "model"), timeout=10000)


def test_a_card_arriving_while_typing_leaves_the_keys_in_the_message_box(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    """Typing on after sending: the card must not take the keyboard, or the next words
    would be written into the command that is about to run."""
    fake_gemini.reply_calls(("bash", {"command": "echo hi"}))
    fake_gemini.reply_text("Ran it.")
    window = desktop.window
    type_and_send(qtbot, window.input, "run it")
    window.input.setFocus()
    card = _waiting_card(desktop, qtbot)
    qtbot.keyClicks(window.input, "and then ")
    assert window.focusWidget() is window.input
    assert window.input.toPlainText() == "and then "
    assert card.command_edit is not None and card.command_edit.toPlainText() == "echo hi"
    qtbot.keyClick(window.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "Ran it." in texts(window.model, "model"), timeout=10000)
    assert window.input.toPlainText() == "and then "  # the draft is still there


def test_a_card_that_takes_the_keyboard_takes_it_on_itself(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    """Keys typed on the card (letters, a space) edit nothing and answer nothing; Tab goes
    into the command; Ctrl+Enter allows."""
    fake_gemini.reply_calls(("bash", {"command": "echo hi"}))
    fake_gemini.reply_text("Ran it.")
    window = desktop.window
    type_and_send(qtbot, window.input, "run it")
    _focus_elsewhere(window)
    card = _waiting_card(desktop, qtbot)
    qtbot.waitUntil(lambda: window.focusWidget() is card)
    qtbot.keyClicks(card, "and ")
    assert card.command_edit is not None and card.command_edit.toPlainText() == "echo hi"
    assert window.approvals.cards() == [card]  # the space pressed no button
    qtbot.keyClick(card, Qt.Key.Key_Tab)
    assert window.focusWidget() is card.command_edit
    qtbot.keyClick(card.command_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "Ran it." in texts(window.model, "model"), timeout=10000)
    qtbot.waitUntil(lambda: _input_has_focus(window))

"""The chat window end to end: real fake Gemini server, real event log, offscreen Qt."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import ClearedEvent, MessageEvent
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import click_row_action, rows, texts, type_and_send
from tests.ui.screenshots import save_screenshot


def test_send_shows_the_streamed_answer(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.reply_text("Hello **there**, here is code:\n\n```python\nprint(1)\n```", chunks=6)
    deltas: list[str] = []
    desktop.runtime.agent.hooks.on_text_delta.append(deltas.append)
    window = desktop.window
    streamed: list[bool] = []
    window.model.rowsInserted.connect(
        lambda _p, first, _l: streamed.append(window.model.item(first).streaming)
    )
    type_and_send(qtbot, window.input, "hi")
    assert window.input.toPlainText() == ""
    qtbot.waitUntil(
        lambda: any("print(1)" in t for t in texts(window.model, "model")), timeout=10000
    )
    qtbot.waitUntil(lambda: not desktop.bridge.busy)
    assert len(deltas) >= 2, "the answer arrived in pieces"
    assert True in streamed, "a streaming row showed the answer before it was complete"
    assert texts(window.model, "user") == ["hi"]
    assert not any(i.streaming for i in rows(window.model))
    assert window.input.history == ["hi"]
    # Up on the empty input recalls the last message.
    qtbot.keyClick(window.input, Qt.Key.Key_Up)
    assert window.input.toPlainText() == "hi"


def test_shift_enter_adds_a_line(desktop: Desktop, qtbot: QtBot) -> None:
    box = desktop.window.input
    box.setFocus()
    qtbot.keyClicks(box, "one")
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(box, "two")
    assert box.toPlainText() == "one\ntwo"
    assert not desktop.bridge.busy


def test_cancel_mid_turn(desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot) -> None:
    fake_gemini.delay(5).reply_text("too late")
    window = desktop.window
    type_and_send(qtbot, window.input, "slow question")
    qtbot.waitUntil(lambda: window.stop_button.isVisible())
    qtbot.waitUntil(lambda: texts(window.model, "user") == ["slow question"])
    window.stop_button.click()
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=5000)
    assert not window.stop_button.isVisible()
    assert "too late" not in " ".join(texts(window.model, "model"))
    fake_gemini.reset()
    fake_gemini.reply_text("fresh answer")
    type_and_send(qtbot, window.input, "again")
    qtbot.waitUntil(lambda: "fresh answer" in texts(window.model, "model"), timeout=10000)


def test_two_sends_are_queued_in_order(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.delay(1.0).reply_text("answer one").reply_text("answer two")
    window = desktop.window
    type_and_send(qtbot, window.input, "first")
    type_and_send(qtbot, window.input, "second")
    qtbot.waitUntil(lambda: desktop.bridge.queued == ["second"])
    qtbot.waitUntil(window.queued_strip.isVisible)
    qtbot.waitUntil(
        lambda: texts(window.model, "model") == ["answer one", "answer two"], timeout=10000
    )
    assert texts(window.model, "user") == ["first", "second"]
    assert not window.queued_strip.isVisible()
    order = [
        (e.event.role, e.seq)
        for e in desktop.runtime.log.entries("default")
        if isinstance(e.event, MessageEvent)
    ]
    assert [r for r, _ in order] == ["user", "model", "user", "model"]


def test_failed_turn_keeps_the_message_and_retries(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.fail(400, times=1, message="bad request for the test")
    window = desktop.window
    type_and_send(qtbot, window.input, "please")
    qtbot.waitUntil(lambda: window.failure() is not None, timeout=10000)
    assert "bad request for the test" in (window.failure() or "")
    assert desktop.tray is not None and desktop.tray.state == "error"
    fake_gemini.reply_text("recovered")
    notice = rows(window.model, "turn_notice")[-1]
    assert notice.tool == "error"
    click_row_action(qtbot, window.view, notice, "retry")
    qtbot.waitUntil(lambda: "recovered" in texts(window.model, "model"), timeout=10000)
    assert window.failure() is None
    users = [
        e
        for e in desktop.runtime.log.entries("default")
        if isinstance(e.event, MessageEvent) and e.event.is_user_turn
    ]
    assert len(users) == 1, "the failed turn's message was kept, not sent twice"


def test_clear_conversation_after_confirmation(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    from PySide6.QtWidgets import QMessageBox

    fake_gemini.reply_text("something")
    window = desktop.window
    type_and_send(qtbot, window.input, "remember this")
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=10000)
    window.confirm_clear()
    box = window.findChild(QMessageBox)
    assert box is not None
    clear = next(b for b in box.buttons() if b.text() == "Clear conversation")
    assert clear.objectName() == "DangerFilled"
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    theme.apply(desktop.app, "dark")
    qtbot.waitExposed(box)
    label_widths = [w.width() for w in box.findChildren(QLabel) if w.text()]
    assert max(label_widths) >= 360, "sized for its text"
    save_screenshot(box, "clear-question-dark")
    theme.apply(desktop.app, "light")
    clear.click()
    qtbot.waitUntil(
        lambda: any(
            isinstance(e.event, ClearedEvent) for e in desktop.runtime.log.entries("default")
        )
    )
    # A fresh start: the old transcript leaves the chat (History & memory keeps it) and the
    # example prompts are back.
    qtbot.waitUntil(lambda: window.model.rowCount() == 0)
    qtbot.waitUntil(lambda: window.empty.isVisible() and not window.view.isVisible())
    assert window.model.oldest_seq is None, "nothing older is loaded back above"
    qtbot.waitUntil(lambda: not desktop.runtime.agent.busy)  # the lease is given back
    assert desktop.runtime.agent.view.messages == []


def test_close_hides_to_tray_with_a_first_time_notice(desktop: Desktop, qtbot: QtBot) -> None:
    assert desktop.tray is not None
    desktop.window.close()
    assert not desktop.window.isVisible()
    assert not desktop.done.is_set()
    assert desktop.tray.notifications[-1][0] == "Koroku is still running"
    desktop.show_chat()
    desktop.window.close()
    assert len(desktop.tray.notifications) == 1
    actions = desktop.tray.actions()
    assert {"Open chat", "Quick ask", "History && memory", "Settings", "Quit"} <= set(actions)
    actions["Open chat"].trigger()
    assert desktop.window.isVisible()


def test_answer_while_hidden_notifies(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    assert desktop.tray is not None
    fake_gemini.delay(0.5).reply_text("First line of the answer\nsecond line")
    desktop.bridge.send("hello")
    desktop.window.hide()
    qtbot.waitUntil(
        lambda: any(m == "First line of the answer" for _, m in desktop.tray.notifications),
        timeout=10000,
    )


def test_quit_cancels_the_running_turn(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.delay(5).reply_text("never")
    desktop.bridge.send("long one")
    qtbot.waitUntil(lambda: desktop.tray is not None and desktop.tray.state == "working")
    assert desktop.tray is not None
    desktop.tray.actions()["Quit"].trigger()
    qtbot.waitUntil(desktop.done.is_set, timeout=5000)
    assert not desktop.bridge.busy

"""Regenerate and edit-and-resend from the chat window: hover actions on the last turn,
the keyboard shortcuts, the editing state (banner, Esc restores the draft), and the log
keeping the replaced turns while the chat leaves them out."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent, StoredEvent, SupersededEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.items import ChatItem
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import click_row_action, rows, texts, type_and_send
from tests.ui.screenshots import save_variants


def hover(qtbot: QtBot, desktop: Desktop, item: ChatItem) -> list[str]:
    """Move the mouse over `item`'s row; the actions painted there."""
    view = desktop.window.view
    row = desktop.window.model.row_of(item)
    view.scrollTo(desktop.window.model.index(row))
    rect = view.visualRect(desktop.window.model.index(row))
    qtbot.mouseMove(view.viewport(), QPoint(rect.center().x(), rect.top() + 12))
    QApplication.processEvents()
    view.viewport().repaint()
    return [a for _, a in view.delegate._hits.get(row, [])]


def superseded(desktop: Desktop) -> list[str]:
    entries = desktop.runtime.log.entries("default")
    return [
        e.event.reason
        for e in entries
        if isinstance(e, StoredEvent) and isinstance(e.event, SupersededEvent)
    ]


def idle_with_actions(qtbot: QtBot, desktop: Desktop) -> None:
    model = desktop.window.model
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=15000)
    qtbot.waitUntil(lambda: any(i.actions == ("edit",) for i in rows(model, "user")), timeout=5000)


def test_regenerate_then_edit_from_the_hover_actions_and_the_keyboard(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, qapp: QApplication
) -> None:
    window, model = desktop.window, desktop.window.model
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    fake_gemini.reply_text("first answer")
    type_and_send(qtbot, window.input, "name a colour")
    qtbot.waitUntil(lambda: texts(model, "model") == ["first answer"], timeout=15000)
    idle_with_actions(qtbot, desktop)
    answer = rows(model, "model")[-1]
    assert answer.actions == ("regenerate",)
    assert "regenerate" in hover(qtbot, desktop, answer)
    save_variants(qapp, window, "regenerate-hover")

    fake_gemini.reply_text("second answer")
    click_row_action(qtbot, window.view, answer, "regenerate")
    qtbot.waitUntil(lambda: texts(model, "model") == ["second answer"], timeout=15000)
    assert texts(model, "user") == ["name a colour"], "the replaced turn left the chat"
    assert superseded(desktop) == ["regenerate"]
    idle_with_actions(qtbot, desktop)
    # ‹ 2/2 ›: the replaced answer is one click away, and back.
    newest = rows(model, "model")[-1]
    assert newest.args["versions"][:2] == (2, 2)
    click_row_action(qtbot, window.view, newest, "version:")  # ‹
    assert texts(model, "model") == ["first answer"]
    assert rows(model, "model")[-1].args["versions"][:2] == (1, 2)
    older = rows(model, "model")[-1]
    window.view.viewport().repaint()  # the painted targets of the row as it is now
    hits = [a for _, a in window.view.delegate._hits.get(model.row_of(older), [])]
    forward = next(a for a in hits if a.startswith("version:") and a.endswith(":1"))
    click_row_action(qtbot, window.view, older, forward)
    assert texts(model, "model") == ["second answer"]

    # Keyboard: Ctrl+Shift+E edits; Esc gives back the draft that was being typed.
    window.input.setPlainText("a half-typed draft")
    qtbot.keyClick(
        window.input,
        Qt.Key.Key_E,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: window.last_turn.banner.isVisible(), timeout=3000)
    assert window.input.toPlainText() == "name a colour"
    assert window.send_button.text() == "Send edit"
    assert [i.actions for i in model.items() if i.actions] == [("editing",)], "no actions"
    window.input.setPlainText("name a dark colour")
    save_variants(qapp, window, "editing-last-message")
    qtbot.keyClick(window.input, Qt.Key.Key_Escape)
    assert not window.last_turn.banner.isVisible()
    assert window.input.toPlainText() == "a half-typed draft"
    assert window.send_button.text() == "Send"
    idle_with_actions(qtbot, desktop)

    # The Edit chip on the bubble, then Enter sends the edited text in place of the message.
    window.input.clear()
    bubble = rows(model, "user")[-1]
    assert "edit" in hover(qtbot, desktop, bubble)
    click_row_action(qtbot, window.view, bubble, "edit")
    assert window.last_turn.editing is not None and window.last_turn.banner.isVisible()
    qtbot.waitUntil(window.input.hasFocus, timeout=3000)
    fake_gemini.reply_text("navy")
    type_and_send(qtbot, window.input, "name a dark colour")
    qtbot.waitUntil(lambda: texts(model, "model") == ["navy"], timeout=15000)
    assert texts(model, "user") == ["name a dark colour"]
    assert superseded(desktop) == ["regenerate", "edit"]
    request = fake_gemini.generate_requests()[-1]
    assert "name a colour" not in str(request.contents), "the replaced turns are not sent"

    # A reload shows the log as the chat did: the replaced turns stay out of the chat.
    window.set_history(desktop.runtime.log.entries("default"))
    assert texts(model, "user") == ["name a dark colour"]
    assert texts(model, "model") == ["navy"]
    assert rows(model, "model")[-1].args["versions"][:2] == (3, 3), "the versions survive a reload"
    click_row_action(qtbot, window.view, rows(model, "model")[-1], "version:")
    assert texts(model, "user") == ["name a colour"], "an edit's version has its own message"
    assert texts(model, "model") == ["second answer"]


def test_no_actions_while_a_turn_runs(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window, model = desktop.window, desktop.window.model
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    fake_gemini.reply_text("one")
    type_and_send(qtbot, window.input, "first")
    idle_with_actions(qtbot, desktop)
    # Each time the last turn's actions are decided, note whether a turn was running then.
    decided_while_busy: list[bool] = []
    window.last_turn._refresh.timeout.connect(
        lambda: decided_while_busy.append(desktop.bridge.busy)
    )
    fake_gemini.delay(2).reply_text("two")
    type_and_send(qtbot, window.input, "second")
    qtbot.waitUntil(lambda: any(decided_while_busy), timeout=5000)
    assert desktop.bridge.busy
    assert all(i.actions == () for i in model.items())
    qtbot.keyClick(
        window.input,
        Qt.Key.Key_R,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert not window.last_turn.banner.isVisible()
    qtbot.waitUntil(lambda: texts(model, "model") == ["one", "two"], timeout=15000)
    assert superseded(desktop) == [], "nothing is replaced while a turn runs"
    idle_with_actions(qtbot, desktop)
    assert [i.actions for i in rows(model, "user")] == [(), ("edit",)], "only the last turn"


def test_an_edit_that_can_no_longer_replace_its_turn_keeps_the_text(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    """Another writer adds a turn while the person edits: nothing is replaced, the window
    says why, and the edited text is back in the message box."""
    window, model = desktop.window, desktop.window.model
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    fake_gemini.reply_text("first answer")
    type_and_send(qtbot, window.input, "first question")
    idle_with_actions(qtbot, desktop)
    window.last_turn.start_edit()
    assert window.last_turn.editing is not None
    other = SqliteEventLog(desktop.runtime.paths.db)
    try:
        other.append(
            "default",
            [
                MessageEvent(
                    role="user", origin="person", parts=[TextPart(text="from a terminal")]
                ),
                MessageEvent(
                    role="model", origin="model", parts=[TextPart(text="terminal answer")]
                ),
            ],
            turn_id="terminal-turn",
        )
    finally:
        other.close()
    type_and_send(qtbot, window.input, "first question, edited")
    qtbot.waitUntil(lambda: window.notice.isVisible(), timeout=10000)
    assert "moved on" in window.notice.text()
    assert window.input.toPlainText() == "first question, edited"
    assert superseded(desktop) == []
    qtbot.waitUntil(lambda: "terminal answer" in texts(model, "model"), timeout=5000)

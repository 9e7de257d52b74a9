"""MCP prompts as slash commands in the chat window, against server-everything: `/` lists
them, the keyboard chooses one, its arguments are asked inline (completed by the server)
and its messages are sent as the person's message."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.slash_commands import SlashCommands
from tests.fakes.gemini_server import FakeGemini
from tests.support.gemini import sent_user_texts
from tests.ui.screenshots import save_themed


def _slash(desk: Desktop) -> SlashCommands:
    slash = desk.slash_commands
    assert isinstance(slash, SlashCommands)
    return slash


def _field(desk: Desktop, name: str) -> QLineEdit:
    field = desk.window.findChild(QLineEdit, f"PromptArg_{name}")
    assert isinstance(field, QLineEdit)
    return field


def test_slash_lists_prompts_and_the_keyboard_sends_one_with_its_arguments(
    ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    box, slash = ev_desktop.window.input, _slash(ev_desktop)
    box.setFocus()
    qtbot.keyClicks(box, "/")
    assert slash.list.isVisible()
    titles = [slash.list.item(i).text().split("\n")[0] for i in range(slash.list.count())]
    assert "/ev:simple-prompt" in titles and "/ev:args-prompt  city [state]" in titles
    qtbot.keyClicks(box, "ev:ar")
    assert slash.list.count() == 1
    qtbot.keyClick(box, Qt.Key.Key_Escape)  # closes the list, keeps the text
    assert not slash.list.isVisible() and box.toPlainText() == "/ev:ar"
    qtbot.keyClick(box, Qt.Key.Key_Backspace)
    qtbot.keyClicks(box, "r")
    assert slash.list.isVisible()
    qtbot.keyClick(box, Qt.Key.Key_Return)
    city = _field(ev_desktop, "city")
    qtbot.waitUntil(city.hasFocus)
    assert not box.toPlainText() and slash.bar.isVisible()
    fake_gemini.reply_text("Sunny.")
    qtbot.keyClicks(city, "Oslo")
    qtbot.keyClick(city, Qt.Key.Key_Return)  # state is optional: sent
    qtbot.waitUntil(lambda: len(fake_gemini.generate_requests()) == 1, timeout=30000)
    assert sent_user_texts(fake_gemini) == ["What's weather in Oslo?"]
    assert not slash.bar.isVisible()
    qtbot.waitUntil(box.hasFocus)


def test_arguments_are_completed_by_the_server(
    ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    box, slash = ev_desktop.window.input, _slash(ev_desktop)
    box.setFocus()
    qtbot.keyClicks(box, "/ev:completable")
    qtbot.keyClick(box, Qt.Key.Key_Tab)
    department = _field(ev_desktop, "department")
    qtbot.waitUntil(department.hasFocus)
    model = department.completer().model()
    qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=30000)  # the server's suggestions
    qtbot.keyClicks(department, "Engineering")
    department.completer().popup().hide()
    qtbot.keyClick(department, Qt.Key.Key_Return)
    name = _field(ev_desktop, "name")
    qtbot.waitUntil(name.hasFocus)
    qtbot.keyClicks(name, "Al")
    qtbot.waitUntil(lambda: "Alice" in name.completer().model().stringList(), timeout=30000)  # type: ignore[attr-defined]
    name.completer().popup().hide()
    fake_gemini.reply_text("Promoted.")
    qtbot.keyClick(name, Qt.Key.Key_Return)  # "Al" settles on the server's one completion
    qtbot.waitUntil(lambda: len(fake_gemini.generate_requests()) == 1, timeout=30000)
    assert sent_user_texts(fake_gemini) == [
        "Please promote Alice to the head of the Engineering team."
    ]
    assert not slash.bar.isVisible()


def test_a_command_typed_whole_is_sent_and_esc_cancels_the_arguments(
    ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window, slash = ev_desktop.window, _slash(ev_desktop)
    window.input.setFocus()
    qtbot.keyClicks(window.input, "/ev:args-prompt")
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    city = _field(ev_desktop, "city")
    qtbot.waitUntil(city.hasFocus)
    qtbot.keyClick(city, Qt.Key.Key_Escape)
    assert not slash.bar.isVisible()
    qtbot.waitUntil(window.input.hasFocus)
    assert not fake_gemini.generate_requests()
    fake_gemini.reply_text("Rainy.")
    qtbot.keyClicks(window.input, "/ev:args-prompt city=Bergen")
    assert not slash.list.isVisible()  # arguments typed: no list
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(fake_gemini.generate_requests()) == 1, timeout=30000)
    assert sent_user_texts(fake_gemini) == ["What's weather in Bergen?"]
    qtbot.keyClicks(window.input, "/ev:args-prompt a b c")
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "too many arguments" in window.notice.text())
    assert window.input.toPlainText() == "/ev:args-prompt a b c"  # kept to fix


def test_screenshots_of_the_list_and_the_arguments_bar(ev_desktop: Desktop, qtbot: QtBot) -> None:
    window = ev_desktop.window
    window.input.setFocus()
    qtbot.keyClicks(window.input, "/")
    save_themed(window, "mcp-slash-list", [(400, 760), (900, 760)])
    qtbot.keyClicks(window.input, "ev:completable")
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    qtbot.waitUntil(_field(ev_desktop, "department").hasFocus)
    save_themed(window, "mcp-slash-arguments", [(400, 760), (900, 760)])

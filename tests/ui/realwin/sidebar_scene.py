"""The conversations sidebar on the real X server: a second conversation started with Ctrl+N,
the list with a pinned conversation and chats imported from ChatGPT and Claude (their origin
badges), the header's sidebar button (hide and show; the drop-down in a narrow window), a
conversation renamed and chosen in the list, and the quick-ask popup saying where its question
goes. No visible text cut off, typed keys land in the message box after each action."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

from koroku_desktop.maintenance.other_assistants import import_other_assistant
from koroku_desktop.store import SqliteEventLog
from tests.fakes.gemini_server import FakeGemini
from tests.imports.samples import chatgpt_simple, claude_export, write_chatgpt_zip
from tests.ui.realwin.driver import Session, act, click, press, settle, started, until


async def conversations(s: Session, fake: FakeGemini) -> None:
    """Two conversations, switched between with the sidebar or its drop-down."""
    os.environ["GEMINI_API_KEY"] = "test-key"
    desk = s.desktop("sidebar")
    imported(desk.runtime.log, s.work / "exports")
    await started(desk)
    window = desk.window
    fake.reply_text("Zebras sleep standing up, mostly.")
    window.input.setPlainText("How do zebras sleep?")
    await press(Qt.Key.Key_Return)
    await until(lambda: not desk.bridge.busy and window.model.rowCount() >= 2, "the answer")
    first = desk.runtime.agent.conversation_id
    await press(Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: desk.runtime.agent.conversation_id != first, "the new conversation")
    await until(lambda: len(desk.conversations.conversations) == 5, "all listed")
    await s.typed_lands(desk, "Ctrl+N")
    desk.conversations.toggle_pin(first)
    await until(lambda: first in desk.conversations.pinned(), "the pin")
    await settle(10)
    s.look(window, "conversations")

    if window.sidebar.isVisible():
        await click(window.header.sidebar_button)
        await until(lambda: not window.sidebar.isVisible(), "the sidebar hidden")
        await s.typed_lands(desk, "hiding the sidebar")
        await click(window.header.sidebar_button)
        await until(window.sidebar.isVisible, "the sidebar shown again")
        await s.typed_lands(desk, "showing the sidebar")
        rename = window.sidebar.ask_rename(first)
        await until(rename.isActiveWindow, "the rename dialog")
        await press(Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        await act(lambda: QTest.keyClicks(QApplication.focusWidget(), "Zebras at night"))
        await press(Qt.Key.Key_Return)
        titles = window.sidebar.visible_titles
        await until(lambda: any("Zebras at night" in t for t in titles()), "the rename")
        await until(window.isActiveWindow, "the keyboard back in the window after the rename")
        await s.typed_lands(desk, "renaming a conversation")
        listed, lines = window.sidebar.list, window.sidebar.lines
        row = next(
            i
            for i in range(lines.rowCount())
            if lines.index(i).data(Qt.ItemDataRole.UserRole) == first
        )
        where = listed.visualRect(lines.index(row)).center()
        await act(lambda: QTest.mouseClick(listed.viewport(), Qt.MouseButton.LeftButton, pos=where))
    else:
        await click(window.header.sidebar_button)
        menu = window.nav.drop_down
        await until(lambda: isinstance(menu, QMenu) and menu.isVisible(), "the drop-down")
        assert isinstance(menu, QMenu)
        s.look(menu, "conversations-drop-down")
        action = next(a for a in menu.actions() if a.isCheckable() and not a.isChecked())
        await act(action.trigger)
        menu.close()
    await until(lambda: desk.runtime.agent.conversation_id == first, "back in the first")
    await until(lambda: window.model.rowCount() >= 2, "its history")
    await s.typed_lands(desk, "choosing a conversation")
    s.look(window, "conversations: back in the first")

    fake.reply_text("Paris.")
    popup = desk.popup
    popup.pin_button.setChecked(True)
    await act(desk.show_quick_ask)
    await until(popup.isVisible, "the quick-ask popup")
    await act(lambda: popup.ask("What is the capital of France?"))
    await until(lambda: "Paris." in popup.answer_text() and not popup.active, "the quick answer")
    await settle(10)
    s.look(popup, "quick-ask")
    popup.target.chat.trigger()
    await settle(10)
    s.look(popup, "quick-ask-into-chat")
    popup.hide()
    await desk.quit()


def imported(log: SqliteEventLog, folder: Path) -> None:
    """A chat from ChatGPT's export and two from Claude's, brought into `log`."""
    folder.mkdir(parents=True, exist_ok=True)
    chat = chatgpt_simple("gpt-1", "Lisbon trip: where to eat", [("where?", "the bairro")])
    gpt = write_chatgpt_zip(folder / "chatgpt.zip", [chat])
    import_other_assistant(log, gpt, "chatgpt", import_time=time.time(), blobs_dir=folder / "b")
    claude = folder / "conversations.json"
    claude.write_text(json.dumps(claude_export(), ensure_ascii=False))
    import_other_assistant(log, claude, "claude", import_time=time.time(), blobs_dir=folder / "b")

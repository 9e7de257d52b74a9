"""The conversations sidebar on the real X server: a second conversation started with Ctrl+N,
the list, the header's sidebar button (hide and show; the drop-down in a narrow window), a
conversation chosen in the list. No visible text cut off, typed keys land in the message box
after each action."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMenu

from tests.fakes.gemini_server import FakeGemini
from tests.ui.realwin.driver import Session, act, click, press, settle, until


async def conversations(s: Session, fake: FakeGemini) -> None:
    """Two conversations, switched between with the sidebar or its drop-down."""
    os.environ["GEMINI_API_KEY"] = "test-key"
    desk = s.desktop("sidebar")
    await desk.start()
    window = desk.window
    await until(window.isVisible, "the window")
    window.activateWindow()
    if desk.welcome is not None:
        await click(desk.welcome.ok_button)
    fake.reply_text("Zebras sleep standing up, mostly.")
    window.input.setPlainText("How do zebras sleep?")
    await press(Qt.Key.Key_Return)
    await until(lambda: not desk.bridge.busy and window.model.rowCount() >= 2, "the answer")
    first = desk.runtime.agent.conversation_id
    await press(Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: desk.runtime.agent.conversation_id != first, "the new conversation")
    await until(lambda: len(desk.conversations.conversations) == 2, "both listed")
    await s.typed_lands(desk, "Ctrl+N")
    await settle(10)
    s.look(window, "conversations")

    if window.sidebar.isVisible():
        await click(window.header.sidebar_button)
        await until(lambda: not window.sidebar.isVisible(), "the sidebar hidden")
        await s.typed_lands(desk, "hiding the sidebar")
        await click(window.header.sidebar_button)
        await until(window.sidebar.isVisible, "the sidebar shown again")
        await s.typed_lands(desk, "showing the sidebar")
        listed = window.sidebar.list
        row = next(
            i
            for i in range(listed.count())
            if listed.item(i).data(Qt.ItemDataRole.UserRole) == first
        )
        where = listed.visualItemRect(listed.item(row)).center()
        await act(lambda: QTest.mouseClick(listed.viewport(), Qt.MouseButton.LeftButton, pos=where))
    else:
        await click(window.header.sidebar_button)
        menu = window.nav.drop_down
        await until(lambda: isinstance(menu, QMenu) and menu.isVisible(), "the drop-down")
        assert isinstance(menu, QMenu)
        s.look(menu, "conversations: the drop-down")
        action = next(a for a in menu.actions() if a.isCheckable() and not a.isChecked())
        await act(action.trigger)
        menu.close()
    await until(lambda: desk.runtime.agent.conversation_id == first, "back in the first")
    await until(lambda: window.model.rowCount() >= 2, "its history")
    await s.typed_lands(desk, "choosing a conversation")
    s.look(window, "conversations: back in the first")
    await desk.quit()

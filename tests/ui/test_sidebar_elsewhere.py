"""Conversations changed in a terminal while the app is open: deleted, archived and renamed
ones show so in the sidebar; deleting the one open in the window moves it to another."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.domain.conversations import NEW_TITLE, UNTITLED, Conversation
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle
from tests.ui.conftest import run, running_desktop
from tests.ui.helpers import ask, ask_in_new, finish, koroku, listed, texts, titled_replies


def test_a_conversation_deleted_archived_or_renamed_in_a_terminal_leaves_the_sidebar(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    with running_desktop(qtbot, titled_replies()) as desk:
        alpha = ask(qtbot, desk, "alpha")
        ask_in_new(qtbot, desk, "beta")
        ask_in_new(qtbot, desk, "gamma")
        qtbot.waitUntil(
            lambda: listed(desk) == ["About gamma", "About beta", UNTITLED], timeout=5000
        )
        finish(koroku("conversations", "delete", "About beta"))
        qtbot.waitUntil(lambda: listed(desk) == ["About gamma", UNTITLED], timeout=10000)
        assert desk.tray is not None  # the tray's recent list follows the sidebar
        assert [a.text() for a in desk.tray.recent.actions()] == ["About gamma", UNTITLED]
        finish(koroku("conversations", "archive", alpha))
        qtbot.waitUntil(
            lambda: listed(desk) == ["About gamma", f"{UNTITLED} (archived)"], timeout=10000
        )
        assert [a.text() for a in desk.tray.recent.actions()] == ["About gamma"]
        finish(koroku("conversations", "rename", "About gamma", "Greek letters"))
        qtbot.waitUntil(
            lambda: listed(desk) == ["Greek letters", f"{UNTITLED} (archived)"], timeout=10000
        )
        assert desk.window.windowTitle() == "Greek letters — Koroku"  # the one shown


def test_the_conversation_shown_deleted_in_a_terminal_gives_way_to_another_and_says_so(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    with running_desktop(qtbot, titled_replies()) as desk:
        window = desk.window
        alpha = ask(qtbot, desk, "alpha")
        beta = ask_in_new(qtbot, desk, "beta")
        qtbot.waitUntil(lambda: listed(desk) == ["About beta", UNTITLED], timeout=5000)
        window.input.setPlainText("a draft not sent yet")

        finish(koroku("conversations", "delete", beta))
        qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id == alpha, timeout=10000)
        qtbot.waitUntil(lambda: texts(window.model, "user") == ["alpha"], timeout=5000)
        qtbot.waitUntil(lambda: window.windowTitle() == f"{UNTITLED} — Koroku", timeout=5000)
        assert listed(desk) == [UNTITLED]
        qtbot.waitUntil(window.notice.isVisible, timeout=5000)
        assert "“About beta” was deleted elsewhere" in window.notice.text()
        assert window.input.toPlainText() == "a draft not sent yet"
        side = window.sidebar
        assert [i.data(Qt.ItemDataRole.UserRole) for i in side.list.selectedIndexes()] == [alpha]

        # The last one deleted too: a new conversation takes its place.
        finish(koroku("conversations", "delete", alpha))
        qtbot.waitUntil(
            lambda: desk.runtime.agent.conversation_id not in (alpha, beta), timeout=10000
        )
        qtbot.waitUntil(lambda: listed(desk) == [NEW_TITLE], timeout=5000)
        assert window.model.rowCount() == 0
        assert window.input.toPlainText() == "a draft not sent yet"
        ask(qtbot, desk, "gamma")  # and it talks in the new one
        qtbot.waitUntil(lambda: listed(desk) == ["About gamma"], timeout=5000)


def test_the_conversation_shown_archived_in_a_terminal_stays_open_marked_archived(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    with running_desktop(qtbot, titled_replies()) as desk:
        alpha = ask(qtbot, desk, "alpha")
        finish(koroku("conversations", "archive", alpha))
        qtbot.waitUntil(lambda: listed(desk) == [f"{UNTITLED} (archived)"], timeout=10000)
        assert desk.runtime.agent.conversation_id == alpha
        assert texts(desk.window.model, "user") == ["alpha"]


class HeldBook(ConversationBook):
    """The app's registry, whose next read, once `hold` is set, waits for `release`
    after reading (a read that began before a change and ends after a later one)."""

    def __init__(self, book: ConversationBook) -> None:
        super().__init__(book.log)
        self.hold = threading.Event()
        self.held = threading.Event()
        self.release = threading.Event()

    def all(self, *, counts: bool = True) -> dict[str, Conversation]:
        found = super().all(counts=counts)
        if self.hold.is_set():
            self.hold.clear()
            self.held.set()
            self.release.wait(30)
        return found


def test_a_list_read_before_a_terminal_delete_and_ending_after_a_later_read_is_not_shown(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    with running_desktop(qtbot, titled_replies()) as desk:
        switcher = desk.conversations
        ask(qtbot, desk, "alpha")
        ask_in_new(qtbot, desk, "beta")
        qtbot.waitUntil(lambda: listed(desk) == ["About beta", UNTITLED], timeout=5000)
        book = switcher.book = HeldBook(switcher.book)

        book.hold.set()
        slow = asyncio.ensure_future(switcher.load())  # e.g. after a pin from the sidebar
        qtbot.waitUntil(book.held.is_set, timeout=5000)
        finish(koroku("conversations", "delete", UNTITLED))
        qtbot.waitUntil(lambda: listed(desk) == ["About beta"], timeout=10000)
        book.release.set()
        qtbot.waitUntil(slow.done, timeout=5000)
        settle()
        assert listed(desk) == ["About beta"]


def test_two_reads_that_both_find_the_shown_conversation_deleted_move_off_it_once(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    """Two reads of the list end close together (a terminal's change and one of ours), each
    finding the conversation shown deleted: one new conversation takes its place, not two."""
    with running_desktop(qtbot, titled_replies()) as desk:
        switcher = desk.conversations
        alpha = ask(qtbot, desk, "alpha")
        qtbot.waitUntil(lambda: listed(desk) == [UNTITLED], timeout=5000)
        other = ConversationBook(switcher.book.log)  # as another process would
        other.delete(alpha)
        run(qtbot, asyncio.gather(switcher.load(), switcher.load()))
        qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id != alpha, timeout=10000)
        qtbot.waitUntil(lambda: listed(desk) == [NEW_TITLE], timeout=5000)
        settle()
        live = [c for c in switcher.book.all(counts=False).values() if not c.deleted]
        assert len(live) == 1, [c.title for c in live]


def test_a_conversation_deleted_in_a_terminal_while_the_window_switches_to_it_is_left(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The terminal's delete lands while the switch loads the page: once the switch ends,
    the window moves off the conversation it just opened, as when it was shown already."""
    with running_desktop(qtbot, titled_replies()) as desk:
        switcher = desk.conversations
        alpha = ask(qtbot, desk, "alpha")
        beta = ask_in_new(qtbot, desk, "beta")
        qtbot.waitUntil(lambda: listed(desk) == ["About beta", UNTITLED], timeout=5000)
        gate = asyncio.Event()
        switch_to = desk.runtime.switch_to

        async def slow_switch(conversation: Conversation) -> None:  # a long page, say
            await gate.wait()
            await switch_to(conversation)

        monkeypatch.setattr(desk.runtime, "switch_to", slow_switch)
        switching = asyncio.ensure_future(switcher.switch(alpha))
        qtbot.waitUntil(lambda: switcher.switching, timeout=5000)
        finish(koroku("conversations", "delete", alpha))
        qtbot.waitUntil(lambda: listed(desk) == ["About beta"], timeout=10000)
        gate.set()
        qtbot.waitUntil(switching.done, timeout=10000)
        qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id == beta, timeout=10000)
        qtbot.waitUntil(desk.window.notice.isVisible, timeout=5000)
        assert f"“{UNTITLED}” was deleted elsewhere" in desk.window.notice.text()

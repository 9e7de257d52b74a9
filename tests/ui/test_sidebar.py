"""The conversations sidebar: listed by last activity with their titles (the model's, after
the first exchange), Ctrl+N starts one, choosing one shows its history and talks in its own
live context, rename / pin / archive / delete, a narrow window's drop-down, the tray's
recent list, and conversations made in a terminal appearing (real `koroku` processes)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.titles import TITLE_INSTRUCTION
from koroku_desktop.app.config import default_paths
from koroku_desktop.app.conversation_wiring import open_conversations
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.conversations import NEW_TITLE, UNTITLED
from koroku_desktop.domain.events import LogEntry
from koroku_desktop.domain.parts import visible_text
from koroku_desktop.ui.app import open_desktop
from tests.fakes.chat_model import FakeChatModel
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle
from tests.ui.conftest import run, running_desktop
from tests.ui.helpers import (
    ask,
    ask_in_new,
    finish,
    koroku,
    listed,
    plain,
    texts,
    titled_replies,
)


def said(model: FakeChatModel) -> list[str]:
    """What the last turn request carried, content by content."""
    turns = [r for r in model.requests if r.system_instruction != TITLE_INSTRUCTION]
    return [plain(visible_text(c.parts)) for c in turns[-1].contents]


def test_ctrl_n_starts_a_conversation_and_switching_shows_each_history_and_context(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    model = titled_replies()
    with running_desktop(qtbot, model) as desk:
        window = desk.window
        assert window.sidebar.isVisible()
        ask(qtbot, desk, "zebras")
        # A fresh data dir talks in the log's first conversation: it has no title to wait for.
        qtbot.waitUntil(lambda: listed(desk) == [UNTITLED], timeout=5000)
        first = desk.runtime.agent.conversation_id

        qtbot.keySequence(window, QKeySequence("Ctrl+N"))
        qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id != first, timeout=5000)
        qtbot.waitUntil(lambda: listed(desk) == [NEW_TITLE, UNTITLED], timeout=5000)
        qtbot.waitUntil(lambda: not desk.conversations.switching)  # its page is shown
        # The title follows the list read after the switch (a read begun before the switch
        # may have listed both while the first was still current).
        qtbot.waitUntil(lambda: window.windowTitle() == f"{NEW_TITLE} — Koroku", timeout=5000)
        assert window.model.rowCount() == 0
        ask(qtbot, desk, "oceans")
        assert said(model) == ["oceans"]  # nothing of the first conversation
        qtbot.waitUntil(lambda: listed(desk) == ["About oceans", UNTITLED], timeout=5000)
        assert texts(window.model, "user") == ["oceans"]

        side = window.sidebar
        rect = side.list.visualRect(side.lines.index(1))
        qtbot.mouseClick(side.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id == first, timeout=5000)
        qtbot.waitUntil(lambda: texts(window.model, "user") == ["zebras"], timeout=5000)
        qtbot.waitUntil(lambda: window.windowTitle() == f"{UNTITLED} — Koroku", timeout=5000)
        ask(qtbot, desk, "more zebras")
        assert said(model) == ["zebras", "re: zebras", "more zebras"]
        qtbot.waitUntil(lambda: listed(desk)[0] == UNTITLED, timeout=5000)


def test_rename_pin_archive_and_delete_from_the_sidebar(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    with running_desktop(qtbot, titled_replies()) as desk:
        side = desk.window.sidebar
        alpha = ask(qtbot, desk, "alpha")
        beta = ask_in_new(qtbot, desk, "beta")
        qtbot.waitUntil(lambda: listed(desk) == ["About beta", UNTITLED], timeout=5000)

        dialog = side.ask_rename(alpha)
        dialog.setTextValue("Stripes")
        dialog.accept()
        qtbot.waitUntil(lambda: listed(desk) == ["About beta", "Stripes"], timeout=5000)
        side.search.setText("strip")
        assert listed(desk) == ["Stripes"]
        side.search.clear()

        side.pin_toggled.emit(alpha)
        qtbot.waitUntil(lambda: listed(desk) == ["★ Stripes", "About beta"], timeout=5000)
        assert [a.text() for a in side.menu_for(alpha).actions()][1] == "Unpin"
        assert desk.runtime.conversations is not None
        pinned = desk.runtime.conversations.get(alpha)
        assert pinned is not None and pinned.pinned  # an event in the log, not window state

        side.archive_requested.emit(alpha)
        qtbot.waitUntil(
            lambda: listed(desk) == ["About beta", "★ Stripes (archived)"], timeout=5000
        )

        side.delete_requested.emit(beta)  # the current one: the window moves on
        qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id != beta, timeout=5000)
        qtbot.waitUntil(lambda: "About beta" not in listed(desk), timeout=5000)
        assert desk.runtime.conversations is not None
        kept = desk.runtime.conversations.get(beta)
        assert kept is not None and kept.deleted  # still in the log, restorable
        assert desk.runtime.log.entries(beta)


def test_a_conversation_made_in_a_terminal_appears_and_the_tray_lists_recent_ones(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    with running_desktop(qtbot, titled_replies()) as desk:
        ask(qtbot, desk, "here")
        finish(koroku("conversations", "new", "From the terminal"))
        qtbot.waitUntil(lambda: "From the terminal" in listed(desk), timeout=10000)
        here = desk.runtime.agent.conversation_id
        finish(koroku("conversations", "rename", here, "Renamed in the terminal"))
        qtbot.waitUntil(lambda: "Renamed in the terminal" in listed(desk), timeout=10000)
        assert desk.window.header.title.full == "Renamed in the terminal"
        side = desk.window.sidebar  # the refills kept the conversation talked in selected
        assert [i.data(Qt.ItemDataRole.UserRole) for i in side.list.selectedIndexes()] == [here]
        desk.popup.target.show_target("current")
        assert desk.popup.target.full == "→ Renamed in the terminal"
        desk.popup.target.show_target("quick_asks")
        assert desk.tray is not None
        recent = [a.text() for a in desk.tray.recent.actions()]
        assert recent == listed(desk)
        action = desk.tray.recent.actions()[recent.index("From the terminal")]
        action.trigger()
        qtbot.waitUntil(  # its (empty) page follows the title once it is read
            lambda: (
                desk.window.windowTitle() == "From the terminal — Koroku"
                and desk.window.model.rowCount() == 0
            ),
            timeout=5000,
        )


def test_the_title_changes_with_the_page_when_the_list_refreshes_mid_switch(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    """Another process's change refreshes the list while a switch still reads the next
    page: the title and the selection stay on the page shown until the new one is there."""
    with running_desktop(qtbot, titled_replies()) as desk:
        first = ask(qtbot, desk, "here")
        second = ask_in_new(qtbot, desk, "there")
        qtbot.waitUntil(lambda: listed(desk) == ["About there", UNTITLED], timeout=5000)
        switcher, window = desk.conversations, desk.window
        seen: list[tuple[str, list[str]]] = []
        load_history = desk.bridge.load_history

        async def refreshed_first(*args: object) -> list[LogEntry]:
            switcher.show(switcher.conversations)  # as a list read ending now would
            seen.append((window.windowTitle(), texts(window.model, "user")))
            return await load_history(*args)  # type: ignore[arg-type]

        desk.bridge.load_history = refreshed_first  # type: ignore[method-assign]
        run(qtbot, switcher.switch(first))
        assert seen == [("About there — Koroku", ["there"])], "the title ran ahead of the page"
        assert window.windowTitle() == f"{UNTITLED} — Koroku"
        assert texts(window.model, "user") == ["here"]
        selected = [i.data(Qt.ItemDataRole.UserRole) for i in window.sidebar.list.selectedIndexes()]
        assert selected == [first] and second != first


def test_a_narrow_window_has_a_drop_down_instead_and_ctrl_b_hides_the_sidebar(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    with running_desktop(qtbot, titled_replies()) as desk:
        window = desk.window
        ask(qtbot, desk, "one")
        qtbot.keySequence(window, QKeySequence("Ctrl+B"))
        assert not window.sidebar.isVisible()
        qtbot.keySequence(window, QKeySequence("Ctrl+B"))
        assert window.sidebar.isVisible()

        window.resize(420, 700)
        qtbot.waitUntil(lambda: not window.sidebar.isVisible())
        qtbot.waitUntil(lambda: listed(desk) == [UNTITLED], timeout=5000)
        menu = window.nav.open_drop_down()
        names = [a.text() for a in menu.actions() if a.text()]
        assert names == ["New conversation", UNTITLED]
        menu.actions()[0].trigger()
        qtbot.waitUntil(lambda: window.windowTitle() == f"{NEW_TITLE} — Koroku", timeout=5000)
        menu.close()
        menus = len(window.findChildren(QMenu))  # this drop-down among them
        for _ in range(3):  # every Ctrl+B makes a menu; the one before it goes
            qtbot.keySequence(window, QKeySequence("Ctrl+B"))
            assert window.nav.drop_down is not None
            window.nav.drop_down.close()
        qtbot.waitUntil(lambda: len(window.findChildren(QMenu)) == menus)


def test_screenshots_of_the_sidebar_at_three_sizes_in_both_themes(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    """tests/screenshots/sidebar-{light,dark}-{400,900,1600}.png: looked at by a person."""
    from koroku_desktop.ui.widgets import theme
    from tests.ui.screenshots import save_screenshot

    with running_desktop(qtbot, titled_replies()) as desk:
        ask(qtbot, desk, "how do zebras sleep standing up in the open savannah at night")
        switcher = desk.conversations
        for question in ("tide tables", "a packing list for a week of walking in the Alps"):
            run(qtbot, switcher.start_new())
            ask(qtbot, desk, question)
        qtbot.waitUntil(lambda: len(listed(desk)) == 3 and NEW_TITLE not in listed(desk))
        desk.window.sidebar.pin_toggled.emit(desk.runtime.agent.conversation_id)
        qtbot.waitUntil(lambda: listed(desk)[0].startswith("★"), timeout=5000)
        app = qtbot_app()
        for mode in ("light", "dark"):
            theme.apply(app, mode)
            for width, height in ((400, 700), (900, 760), (1600, 1000)):
                desk.window.resize(width, height)
                qtbot.waitUntil(lambda w=width: desk.window.width() == w)
                app.processEvents()
                save_screenshot(desk.window, f"sidebar-{mode}-{width}")
                assert desk.window.sidebar.isVisible() == (width >= 700)
            desk.popup.pin_button.setChecked(True)
            desk.show_quick_ask()
            qtbot.waitExposed(desk.popup)
            assert desk.popup.target.full == "→ Quick asks"
            save_screenshot(desk.popup, f"sidebar-popup-{mode}")
            desk.popup.hide()
        theme.apply(app, "light")


def qtbot_app() -> QApplication:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    return app


def test_the_start_lists_the_conversations_before_the_live_context_is_read(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The live context (hundreds of ms on a long history) is read after the window shows
    its page, its title and the sidebar, as after a switch (ui/live_loads.py)."""
    with open_conversations(default_paths()) as book:
        book.create("Long history")
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    desk = open_desktop(app, default_paths(), use_tray=True, model=titled_replies())
    agent = desk.runtime.agent
    read = agent.load
    held = asyncio.Event()

    async def slow_load() -> ContextView:
        await held.wait()
        return await read()

    monkeypatch.setattr(agent, "load", slow_load)
    starting = asyncio.ensure_future(desk.start())
    try:
        qtbot.waitUntil(lambda: listed(desk) == ["Long history"], timeout=5000)
        assert desk.window.windowTitle() == "Long history — Koroku"
        assert not agent.loaded
    finally:
        held.set()
        qtbot.waitUntil(starting.done, timeout=15000)
        run(qtbot, desk.quit())
        for widget in (desk.popup, desk.window):
            widget.close()
            widget.deleteLater()
        desk.deleteLater()
        settle()
    assert starting.result() is None

"""Pins as events in the desktop (pinned first in the sidebar, the drop-down and the tray;
a pin made in a terminal shows; ui.ini's old pins moved into the log once) and imported
chats' origin badge in the sidebar. The whole app offscreen, real `koroku` processes."""

from __future__ import annotations

import json
from pathlib import Path

import qasync
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from koroku_desktop.app.config import default_paths
from koroku_desktop.app.conversation_wiring import open_conversations
from koroku_desktop.ui.chat.origin_badge import ORIGIN_ROLE
from koroku_desktop.ui.conversation_switcher import TRAY_RECENT
from koroku_desktop.ui.pin_migration import PINNED_KEY
from tests.fakes.gemini_server import FakeGemini
from tests.imports.samples import chatgpt_simple, claude_export, write_chatgpt_zip
from tests.ui.conftest import running_desktop
from tests.ui.helpers import finish, koroku, listed, titled_replies


def make(*titles: str) -> list[str]:
    """Conversations with these titles, oldest first; their ids."""
    with open_conversations(default_paths()) as book:
        return [book.create(title).id for title in titles]


def test_old_ui_ini_pins_become_events_once(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    older, _newer = make("Older", "Newer")
    ini = QSettings(str(default_paths().home / "ui.ini"), QSettings.Format.IniFormat)
    ini.setValue(PINNED_KEY, [older, "0190ffff-0000-7000-8000-00000000dead"])  # one gone
    ini.sync()
    with running_desktop(qtbot, titled_replies()) as desk:
        qtbot.waitUntil(lambda: listed(desk) == ["★ Older", "Newer"], timeout=5000)
        desk.ui_settings.sync()
        assert desk.ui_settings.value(PINNED_KEY) is None  # the key is dropped
    with open_conversations(default_paths()) as book:
        assert book.get(older).pinned  # type: ignore[union-attr]
    with running_desktop(qtbot, titled_replies()) as desk:  # a second start adds nothing
        qtbot.waitUntil(lambda: listed(desk) == ["★ Older", "Newer"], timeout=5000)
    rows = json.loads(finish(koroku("conversations", "--json")))
    assert [(c["title"], c["pinned"]) for c in rows] == [("Older", True), ("Newer", False)]
    history = json.loads(finish(koroku("history", "--all", "--json")))
    pins = [e for e in history if e.get("kind") == "conversation" and "pinned" in json.dumps(e)]
    assert len(pins) == 1


def test_a_pin_from_the_terminal_shows_and_the_tray_lists_pinned_ones_first(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    titles = [f"Chat {n}" for n in range(TRAY_RECENT + 2)]
    ids = make(*titles)
    with running_desktop(qtbot, titled_replies()) as desk:
        tray = desk.tray
        assert tray is not None

        def recent() -> list[str]:
            return [a.text() for a in tray.recent.actions()]

        qtbot.waitUntil(lambda: recent() == titles[::-1][:TRAY_RECENT], timeout=5000)
        finish(koroku("conversations", "pin", "Chat 0"))  # the oldest, not in the tray yet
        qtbot.waitUntil(lambda: listed(desk)[0] == "★ Chat 0", timeout=10000)
        assert recent() == ["★ Chat 0", *titles[::-1][: TRAY_RECENT - 1]]
        menu = desk.window.nav.open_drop_down()
        assert [a.text() for a in menu.actions() if a.text()][1] == "★ Chat 0"
        menu.close()
        # Choosing it in the tray opens it in the chat window.
        tray.recent.actions()[0].trigger()
        qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id == ids[0], timeout=5000)
        # Unpinned from the sidebar's menu: an event the terminal sees.
        desk.window.sidebar.menu_for(ids[0]).actions()[1].trigger()
        qtbot.waitUntil(lambda: "Chat 0" in listed(desk), timeout=5000)
        rows = json.loads(finish(koroku("conversations", "--json")))
        assert not any(c["pinned"] for c in rows)


def test_imported_chats_show_their_origin_and_stay_read_only_until_continued(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path, tmp_path: Path
) -> None:
    gpt = write_chatgpt_zip(
        tmp_path / "export.zip",
        [chatgpt_simple("gpt-1", "Trip to Lisbon", [("where to eat?", "try the bairro")])],
    )
    claude = tmp_path / "conversations.json"
    claude.write_text(json.dumps(claude_export(), ensure_ascii=False))
    with running_desktop(qtbot, titled_replies()) as desk:
        finish(koroku("import", str(gpt)))
        finish(koroku("import", str(claude)))
        side = desk.window.sidebar
        qtbot.waitUntil(lambda: side.lines.rowCount() == 3, timeout=10000)
        rows = [side.lines.index(i) for i in range(side.lines.rowCount())]
        items = {str(row.data()): row for row in rows}
        badges = {title: item.data(ORIGIN_ROLE) for title, item in items.items()}
        assert badges["Trip to Lisbon"] == "ChatGPT"
        assert sorted(b for b in badges.values() if b) == ["ChatGPT", "Claude", "Claude"]
        tip = str(items["Trip to Lisbon"].data(Qt.ItemDataRole.ToolTipRole))
        lisbon = str(items["Trip to Lisbon"].data(Qt.ItemDataRole.UserRole))
        assert "Imported from ChatGPT" in tip and "read-only until you continue it" in tip
        side.list.grab()  # the badges paint (the screenshots show them)
        menu = desk.window.nav.open_drop_down()
        lines = [a.text() for a in menu.actions() if a.text()]
        assert "Trip to Lisbon  · ChatGPT" in lines
        menu.close()

        # Continued, it is a conversation like any: the badge stays, the state changes.
        side.chosen.emit(lisbon)
        qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id == lisbon, timeout=5000)
        desk.bridge.send("and for dessert?")
        qtbot.waitUntil(lambda: not desk.bridge.busy, timeout=15000)

        def lisbon_tip() -> str:
            for i in range(side.lines.rowCount()):
                row = side.lines.index(i)
                if row.data(Qt.ItemDataRole.UserRole) == lisbon:
                    return str(row.data(Qt.ItemDataRole.ToolTipRole))
            return ""

        qtbot.waitUntil(lambda: "continued here" in lisbon_tip(), timeout=5000)

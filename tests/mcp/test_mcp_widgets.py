"""The MCP widgets offscreen against a real server: the log dialog, hints on the approval card.

Each is grabbed at 400, 900 and 1600 px in both themes into tests/screenshots/ for a person
to look at; the asserts are on what the widgets hold.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QApplication, QLabel, QWidget
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.ports import ApprovalRequest
from koroku_desktop.app.config import Paths
from koroku_desktop.app.settings_store import SettingsStore
from koroku_desktop.mcp import McpManager
from koroku_desktop.ui.settings.mcp_page import McpSection
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.approval_card import ApprovalCard
from tests.mcp.conftest import rich_entry, write_config
from tests.ui.screenshots import save_screenshot

Factory = Callable[..., McpManager]


def grab_widths(widget: QWidget, name: str) -> None:
    """Save `widget` at 400, 900 and 1600 px, light and dark."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    widget.show()
    for mode in ("light", "dark"):
        theme.apply(app, mode)
        for width in (400, 900, 1600):
            widget.resize(width, max(widget.sizeHint().height(), widget.height()))
            app.processEvents()
            save_screenshot(widget, f"{name}-{mode}-{width}")
    theme.apply(app, "light")


async def test_the_log_dialog_shows_the_servers_log(
    manager_factory: Factory, koroku_home: Path, qtbot: QtBot
) -> None:
    write_config(koroku_home / "mcp.json", {"rich": rich_entry()})
    manager = manager_factory()
    await manager.start()
    await manager.wait_settled(60)
    manager.specs()
    await manager.call("rich_chatter", {})
    log = manager.log_path("rich")
    assert log is not None
    for _ in range(600):
        if log.exists() and "chatter is thinking" in log.read_text("utf-8"):
            break
        await asyncio.sleep(0.05)
    section = McpSection(manager, SettingsStore.open(Paths(koroku_home).ensure()))
    qtbot.addWidget(section)
    section.refresh()
    section.tree.setCurrentItem(section.tree.topLevelItem(0))
    assert "Protocol: MCP 2026-07-28" in section.details.text()
    assert section.log_button.isEnabled()
    dialog = section.show_log()
    assert dialog is not None
    assert "INFO server] chatter is thinking" in dialog.view.toPlainText()
    grab_widths(section, "mcp-settings-section")
    grab_widths(dialog, "mcp-log-dialog")


def test_the_approval_card_shows_the_servers_hints(qtbot: QtBot, tmp_path: Path) -> None:
    source = (
        "MCP server 'rich', tool 'wipe' — marked destructive: may delete or overwrite data, "
        "marked open-world: reaches outside this computer"
    )
    card = ApprovalCard(ApprovalRequest("c1", "rich_wipe", {}, source), tmp_path)
    qtbot.addWidget(card)
    shown = " ".join(w.text() for w in card.findChildren(QLabel))
    assert "marked destructive" in shown and "open-world" in shown
    grab_widths(card, "mcp-approval-hints")

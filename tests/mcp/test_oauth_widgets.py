"""Settings' "Sign in" for an HTTP MCP server, offscreen against the real authorization server.

The browser is an HTTP client injected as the opener (the app uses QDesktopServices). Each
state is grabbed at 400 and 900 px into tests/screenshots/ for a person to look at.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from koroku_desktop.app.config import Paths
from koroku_desktop.app.runtime import ServerStatus
from koroku_desktop.app.settings_store import SettingsStore
from koroku_desktop.ui.settings.mcp_page import McpSection, ServerEditor
from koroku_desktop.ui.settings.mcp_sign_in import NEEDED, SIGNED_IN, WAITING
from tests.mcp.oauth_support import auth_server, follow, keyring_manager
from tests.support.keyring_file import FileKeyring
from tests.support.waits import async_wait_until
from tests.ui.screenshots import save_screenshot


def grab(widget: QWidget, name: str) -> None:
    """`widget` at 400 and 900 px wide."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    widget.show()
    for width in (400, 900):
        widget.resize(width, max(widget.sizeHint().height(), widget.heightForWidth(width), 300))
        app.processEvents()
        save_screenshot(widget, f"{name}-{width}")


async def test_sign_in_from_settings(
    koroku_home: Path, tmp_path: Path, qtbot: QtBot, file_keyring: FileKeyring
) -> None:
    with auth_server(tmp_path, koroku_home):
        manager = keyring_manager(koroku_home)
        opened: list[str] = []
        browser_done = asyncio.Event()

        async def browser(url: str) -> None:
            opened.append(url)
            await browser_done.wait()  # the person is still in the browser
            await follow(url)

        def status() -> ServerStatus:
            return next(s for s in manager.statuses() if s.name == "auth")

        await manager.start()
        try:
            await async_wait_until(lambda: status().state == "failed")
            section = McpSection(
                manager, SettingsStore.open(Paths(koroku_home).ensure()), open_url=browser
            )
            qtbot.addWidget(section)
            section.refresh()
            section.tree.setCurrentItem(section.tree.topLevelItem(0))
            row = section.sign_in_row
            item = section.tree.topLevelItem(0)
            assert item is not None and item.text(3) == "sign in needed"
            assert row.isVisibleTo(section) and row.state.text() == NEEDED
            assert row.sign_in_button.text() == "Sign in…"
            grab(section, "mcp-sign-in-needed")

            task = row.sign_in()
            assert task is not None
            await async_wait_until(lambda: bool(opened))
            assert row.state.text() == WAITING and row.cancel_button.isVisibleTo(row)
            assert not row.sign_in_button.isVisibleTo(row)
            grab(section, "mcp-sign-in-waiting")
            browser_done.set()
            await task
            assert row.state.text() == SIGNED_IN, row.state.text()
            await async_wait_until(lambda: status().state == "ready")
            section.refresh()
            assert item is not None
            first = section.tree.topLevelItem(0)
            assert first is not None and first.text(3) == "ready"
            assert row.sign_out_button.isVisibleTo(row)
            assert row.sign_in_button.text() == "Sign in again…"
            grab(section, "mcp-signed-in")

            out = row.sign_out()
            assert out is not None
            await out
            assert file_keyring.entries() == {}
            await async_wait_until(lambda: status().sign_in == "sign in needed")
        finally:
            await manager.stop()


async def test_cancel_stops_waiting_for_the_browser(
    koroku_home: Path, tmp_path: Path, qtbot: QtBot, file_keyring: FileKeyring
) -> None:
    with auth_server(tmp_path, koroku_home) as server:
        manager = keyring_manager(koroku_home)
        opened: list[str] = []

        def browser(url: str) -> None:
            opened.append(url)  # and the person never comes back

        try:
            await manager.start()
            section = McpSection(
                manager, SettingsStore.open(Paths(koroku_home).ensure()), open_url=browser
            )
            qtbot.addWidget(section)
            section.refresh()
            section.tree.setCurrentItem(section.tree.topLevelItem(0))
            task = section.sign_in_row.sign_in()
            assert task is not None
            await async_wait_until(lambda: bool(opened))
            section.sign_in_row.cancel()
            await asyncio.gather(task, return_exceptions=True)
            assert "Sign-in cancelled" in section.sign_in_row.state.text()
            grab(section, "mcp-sign-in-cancelled")
            section.tree.setCurrentItem(None)  # another selection, then back: the outcome stays
            section.tree.setCurrentItem(section.tree.topLevelItem(0))
            assert "Sign-in cancelled" in section.sign_in_row.state.text()
            assert section.sign_in_row.sign_in_button.isVisibleTo(section.sign_in_row)
            assert server.grants() == []
        finally:
            await manager.stop()


def test_the_editor_says_an_oauth_server_needs_no_header(qtbot: QtBot) -> None:
    editor = ServerEditor("remote", {"url": "http://127.0.0.1:9/mcp"}, lambda *_: None)
    qtbot.addWidget(editor)
    editor.show()
    assert editor.oauth_note.isVisibleTo(editor) and "Sign in…" in editor.oauth_note.text()
    grab(editor, "mcp-editor-http")
    editor.transport.setCurrentIndex(0)
    assert not editor.oauth_note.isVisibleTo(editor)

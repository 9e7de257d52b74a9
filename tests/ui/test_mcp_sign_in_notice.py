"""An HTTP MCP server that wants a sign-in says so in the chat window's status bar."""

from __future__ import annotations

from pathlib import Path

import qasync
from pytestqt.qtbot import QtBot

from tests.fakes.gemini_server import FakeGemini
from tests.mcp.oauth_support import auth_server
from tests.support.keyring_file import FileKeyring
from tests.ui.conftest import running_desktop
from tests.ui.screenshots import save_screenshot


def test_a_server_wanting_a_sign_in_shows_a_line_in_the_status_bar(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    koroku_home: Path,
    tmp_path: Path,
    file_keyring: FileKeyring,
) -> None:
    with auth_server(tmp_path, koroku_home) as server:
        with running_desktop(qtbot) as desk:
            bar = desk.window.statusBar()
            qtbot.waitUntil(lambda: "auth: sign in needed" in bar.currentMessage(), timeout=30_000)
            save_screenshot(desk.window, "chat-mcp-sign-in-needed")
        assert server.grants() == []  # nothing was signed in behind the person's back

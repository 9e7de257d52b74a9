"""MCP in the desktop app: servers start after the window, notices, the approval card, the
settings section (list, status, tools, add/edit/enable/remove, read-only switch), and quit.

The servers are the real ones of tests/mcp/servers/."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QGroupBox, QLabel, QScrollArea
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.settings.mcp_page import McpSection
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.conftest import pid_alive, recorded_calls, stdio_entry, write_config
from tests.ui.conftest import running_desktop
from tests.ui.helpers import texts, type_and_send


@pytest.fixture
def calls_file(tmp_path: Path) -> Path:
    """Where the test server records its calls."""
    return tmp_path / "calls.jsonl"


def _state(desktop: Desktop, name: str) -> str | None:
    assert desktop.runtime.mcp is not None
    return next((s.state for s in desktop.runtime.mcp.statuses() if s.name == name), None)


@pytest.fixture
def mcp_desktop(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    koroku_home: Path,
    calls_file: Path,
) -> Iterator[Desktop]:
    pids = koroku_home / "pids.txt"
    write_config(
        koroku_home / "mcp.json",
        {
            "good": stdio_entry(calls_file, env={"MCP_PID_FILE": str(pids)}),
            "broken": {"command": sys.executable, "args": ["-c", "raise SystemExit(5)"]},
        },
    )
    with running_desktop(qtbot) as desk:
        yield desk
    for line in pids.read_text().split():
        assert not pid_alive(int(line)), "a stdio MCP server outlived quit"


def test_servers_start_after_the_window_and_a_failure_is_a_notice(
    mcp_desktop: Desktop, qtbot: QtBot
) -> None:
    qtbot.waitUntil(lambda: _state(mcp_desktop, "good") == "ready", timeout=30000)
    qtbot.waitUntil(lambda: _state(mcp_desktop, "broken") == "failed", timeout=30000)
    message = mcp_desktop.window.statusBar().currentMessage()
    assert "MCP server 'broken' failed to start" in message


def test_the_approval_card_names_the_server_and_the_tool(
    mcp_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, calls_file: Path
) -> None:
    qtbot.waitUntil(lambda: _state(mcp_desktop, "good") == "ready", timeout=30000)
    fake_gemini.reply_calls(("good_echo", {"text": "card"}))
    fake_gemini.reply_text("Echoed.")
    type_and_send(qtbot, mcp_desktop.window.input, "echo via mcp")
    qtbot.waitUntil(lambda: bool(mcp_desktop.window.approvals.cards()), timeout=10000)
    card = mcp_desktop.window.approvals.cards()[0]
    titles = [w.text() for w in card.findChildren(QLabel)]
    assert any("MCP server 'good', tool 'echo'" in t for t in titles)
    card.allow_once.click()
    qtbot.waitUntil(lambda: "Echoed." in texts(mcp_desktop.window.model, "model"), timeout=10000)
    assert recorded_calls(calls_file)[0]["args"] == {"text": "card"}


def test_the_settings_section_lists_edits_and_switches(
    mcp_desktop: Desktop, qtbot: QtBot, koroku_home: Path
) -> None:
    qtbot.waitUntil(lambda: _state(mcp_desktop, "good") == "ready", timeout=30000)
    dialog = mcp_desktop.show_settings()
    section = dialog.findChild(McpSection)
    assert section is not None
    section.refresh()
    rows = {
        section.tree.topLevelItem(i).text(0): section.tree.topLevelItem(i)
        for i in range(section.tree.topLevelItemCount())
    }
    assert rows["good"].text(3) == "ready" and rows["good"].text(4) == "10"
    section.tree.setCurrentItem(rows["good"])
    assert "peek (read-only)" in section.details.text()
    section.tree.setCurrentItem(rows["broken"])
    assert "Last error:" in section.details.text()

    section.tree.setCurrentItem(rows["good"])
    section.toggle_server()
    config = json.loads((koroku_home / "mcp.json").read_text())
    assert config["mcpServers"]["good"]["enabled"] is False
    qtbot.waitUntil(lambda: _state(mcp_desktop, "good") == "disabled", timeout=10000)
    assert not any(s.name.startswith("good_") for s in mcp_desktop.runtime.tools.specs())

    editor = section.add_server()
    assert editor is not None
    editor.name.setText("broken")  # already taken
    editor.command.setText("python3 -m somewhere")
    editor.accept()
    assert editor.isVisible() and "already a server called 'broken'" in editor.error.text()
    editor.name.setText("web")
    editor.transport.setCurrentIndex(1)
    editor.url.setText("http://127.0.0.1:9/mcp")
    editor.headers.setPlainText("Authorization: Bearer x")
    editor.accept()
    assert not editor.isVisible()
    config = json.loads((koroku_home / "mcp.json").read_text())
    assert config["mcpServers"]["web"] == {
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer x"},
    }
    section.tree.setCurrentItem(section.tree.topLevelItem(0))
    section.refresh()
    names = [section.tree.topLevelItem(i).text(0) for i in range(section.tree.topLevelItemCount())]
    assert "web" in names

    section.trust.setChecked(True)
    stored = json.loads((koroku_home / "settings.json").read_text())
    assert stored["mcp_trust_read_only"] is True
    assert mcp_desktop.runtime.policy.trust_read_only
    dialog.close()


def test_add_starts_empty_and_a_missing_program_is_said_in_words(qapp: QApplication) -> None:
    from koroku_desktop.ui.settings.mcp_page import ServerEditor

    saved: list[tuple[str, dict[str, object]]] = []
    editor = ServerEditor("", {}, lambda name, entry: saved.append((name, entry)))
    assert editor.command.text() == "", "no '' in a new server's command"
    editor.name.setText("notes")
    editor.command.setText("no-such-program-koroku --flag")
    editor.accept()
    assert saved == [], "nothing written for a program that is not there"
    assert "no program 'no-such-program-koroku'" in editor.error.text()
    assert "FileNotFoundError" not in editor.error.text()
    editor.command.setText(f"{sys.executable} -m http.server")
    editor.accept()
    assert saved == [("notes", {"command": sys.executable, "args": ["-m", "http.server"]})]
    editor.deleteLater()


def test_the_server_buttons_wrap_so_settings_fits_400_px(
    desktop: Desktop, qapp: QApplication, qtbot: QtBot
) -> None:
    dialog = desktop.show_settings()
    dialog.resize(400, 760)
    qapp.processEvents()
    assert dialog.width() == 400 and dialog.minimumSizeHint().width() <= 400
    inside = dialog.findChild(McpSection)
    assert inside is not None
    assert inside.button_row.minimumSizeHint().width() <= 380  # never what holds it wide
    for group in dialog.findChildren(QGroupBox):  # the others wrap their words and rows
        assert group.minimumSizeHint().width() <= 380, group.title()
    for scroll in dialog.findChildren(QScrollArea):  # so nothing scrolls sideways
        assert scroll.horizontalScrollBar().maximum() == 0
    dialog.close()

    section = McpSection(desktop.runtime.mcp, desktop.runtime.settings_store)
    section.show()
    try:
        buttons = section.button_row.buttons
        for width, rows in ((900, 1), (340, 2)):
            section.resize(width, section.sizeHint().height())
            qtbot.waitUntil(lambda n=rows: len({b.y() for b in buttons}) == n, timeout=5000)
            for b in buttons:
                assert b.width() >= b.minimumSizeHint().width(), b.text()
        row = section.button_row
        assert row.fitting(10_000) == 5 and row.fitting(0) == 1
        assert row.fitting(row.minimumSizeHint().width()) == 2
    finally:
        section.close()


def test_with_no_server_only_add_is_offered_and_the_list_never_scrolls_sideways(
    desktop: Desktop, qapp: QApplication, qtbot: QtBot
) -> None:
    section = McpSection(desktop.runtime.mcp, desktop.runtime.settings_store)
    section.show()
    try:
        assert section.add_button.isEnabled()
        offered = [b.text() for b in section.button_row.buttons if b.isEnabled()]
        assert offered == ["Add…"], "Edit, Disable, Remove and Log need a server"
        for width in (340, 900):
            section.resize(width, section.sizeHint().height())
            qapp.processEvents()
            bar = section.tree.horizontalScrollBar()
            assert bar.maximum() == 0, f"the list scrolls {bar.maximum()} px sideways at {width}"
    finally:
        section.close()

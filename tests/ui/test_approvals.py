"""Inline approval cards: allowed, denied, edited command, keyboard, tray state."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import rows, texts, type_and_send


def _card(desktop: Desktop, qtbot: QtBot):  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: bool(desktop.window.approvals.cards()), timeout=10000)
    return desktop.window.approvals.cards()[0]


def test_write_allowed_shows_a_diff_and_writes(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path
) -> None:
    target = workspace / "notes.txt"
    target.write_text("alpha\nbeta\n")
    fake_gemini.reply_calls(("write_file", {"path": "notes.txt", "content": "alpha\ngamma\n"}))
    fake_gemini.reply_text("Written.")
    type_and_send(qtbot, desktop.window.input, "update my notes")
    card = _card(desktop, qtbot)
    assert card.request.tool == "write_file"
    assert card.diff_view is not None
    qtbot.waitUntil(lambda: "+gamma" in card.diff_view.toPlainText())
    assert "-beta" in card.diff_view.toPlainText()
    tool = rows(desktop.window.model, "tool")
    assert tool and tool[0].tool == "write_file"
    assert desktop.tray is not None and desktop.tray.state == "approval"
    card.allow_once.click()
    qtbot.waitUntil(lambda: "Written." in texts(desktop.window.model, "model"), timeout=10000)
    assert target.read_text() == "alpha\ngamma\n"
    assert rows(desktop.window.model, "tool")[0].status == "ok"
    assert not desktop.window.approvals.isVisible()
    qtbot.waitUntil(lambda: desktop.tray is not None and desktop.tray.state == "idle")


def test_denied_write_leaves_the_file_untouched(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path
) -> None:
    target = workspace / "keep.txt"
    target.write_text("original\n")
    fake_gemini.reply_calls(("write_file", {"path": "keep.txt", "content": "clobbered\n"}))
    fake_gemini.reply_text("Understood, I left it.")
    type_and_send(qtbot, desktop.window.input, "overwrite keep.txt")
    card = _card(desktop, qtbot)
    card.setFocus()
    qtbot.keyClick(card.deny, Qt.Key.Key_Space)  # keyboard-reachable
    qtbot.waitUntil(
        lambda: "Understood, I left it." in texts(desktop.window.model, "model"), timeout=10000
    )
    assert target.read_text() == "original\n"
    tool = rows(desktop.window.model, "tool")[0]
    assert tool.status == "error"
    assert tool.result == {"error": "denied by the user"}


def test_bash_command_is_editable_before_it_runs(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path
) -> None:
    fake_gemini.reply_calls(("bash", {"command": "echo model > out.txt"}))
    fake_gemini.reply_text("Ran it.")
    type_and_send(qtbot, desktop.window.input, "run something")
    card = _card(desktop, qtbot)
    assert card.command_edit is not None
    assert card.command_edit.toPlainText() == "echo model > out.txt"
    card.command_edit.setPlainText("echo edited > out.txt")
    card.allow_session.click()
    qtbot.waitUntil(lambda: "Ran it." in texts(desktop.window.model, "model"), timeout=10000)
    assert (workspace / "out.txt").read_text().strip() == "edited"
    assert rows(desktop.window.model, "tool")[0].args["command"] == "echo edited > out.txt"
    assert desktop.runtime.policy.is_granted("bash")


def test_always_allow_is_persisted(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path
) -> None:
    fake_gemini.reply_calls(("bash", {"command": "true"}))
    fake_gemini.reply_text("ok")
    type_and_send(qtbot, desktop.window.input, "go")
    card = _card(desktop, qtbot)
    card.allow_always.click()
    qtbot.waitUntil(lambda: "ok" in texts(desktop.window.model, "model"), timeout=10000)
    assert "bash" in desktop.runtime.settings.always_allow


def test_approval_while_hidden_notifies(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path
) -> None:
    fake_gemini.reply_calls(("bash", {"command": "true"}))
    fake_gemini.reply_text("done")
    desktop.window.hide()
    desktop.bridge.send("do it in the background")
    assert desktop.tray is not None
    qtbot.waitUntil(
        lambda: desktop.tray is not None and desktop.tray.state == "approval", timeout=10000
    )
    assert any("approval" in title for title, _ in desktop.tray.notifications)
    desktop.show_chat()
    card = _card(desktop, qtbot)
    qtbot.keyClick(card, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "done" in texts(desktop.window.model, "model"), timeout=10000)

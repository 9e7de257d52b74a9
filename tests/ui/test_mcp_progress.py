"""An MCP call's progress in the chat window, against server-everything: the running card
and the status row show the server's reports; Stop cancels the task."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import rows, type_and_send
from tests.ui.screenshots import WINDOW_SIZES, save_themed


def test_the_running_card_and_status_row_show_progress(
    ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    manager = ev_desktop.runtime.mcp
    assert manager is not None
    qtbot.waitUntil(lambda: [s.state for s in manager.statuses()] == ["ready"], timeout=60000)
    manager.reserved_names = ()
    fake_gemini.reply_calls(("ev_simulate-research-query", {"topic": "tea"}))
    fake_gemini.reply_text("Researched.")
    ev_desktop.runtime.policy.grant("ev_simulate-research-query", "session")
    model = ev_desktop.window.model
    type_and_send(qtbot, ev_desktop.window.input, "research tea")

    def card_text() -> str:
        cards = [i for i in rows(model, "tool") if i.tool == "ev_simulate-research-query"]
        return cards[0].text if cards and cards[0].status == "running" else ""

    pattern = r"Running the tool ev_simulate-research-query: (\w+ \w+|completed — .*)…"

    def progressing() -> bool:
        """The card and the status row both show the server's report (checked together:
        on a loaded machine the tool may be over, and the turn on, by a later look)."""
        status = [i.text for i in rows(model, "status")]
        return "Analyzing content" in card_text() and any(re.fullmatch(pattern, t) for t in status)

    qtbot.waitUntil(progressing, timeout=60000)
    save_themed(ev_desktop.window, "mcp-progress", WINDOW_SIZES)
    qtbot.waitUntil(
        lambda: any(i.text == "Researched." for i in rows(model, "model")), timeout=60000
    )


def test_stop_cancels_a_running_task(
    ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    manager = ev_desktop.runtime.mcp
    assert manager is not None
    qtbot.waitUntil(lambda: [s.state for s in manager.statuses()] == ["ready"], timeout=60000)
    statuses: list[str | None] = []
    manager.on_progress.append(lambda update: statuses.append(update.task_status))
    fake_gemini.reply_calls(("ev_simulate-research-query", {"topic": "stop me"}))
    ev_desktop.runtime.policy.grant("ev_simulate-research-query", "session")
    type_and_send(qtbot, ev_desktop.window.input, "research and stop")
    qtbot.waitUntil(lambda: "working" in statuses, timeout=60000)
    qtbot.mouseClick(ev_desktop.window.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: statuses[-1] == "cancelled", timeout=30000)
    qtbot.waitUntil(lambda: not ev_desktop.window.stop_button.isVisible(), timeout=30000)

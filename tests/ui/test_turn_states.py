"""The conversation shows its state: a live status row, Stopped, a failure with its full text,
the tool budget — never only a red Stop button."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import running_desktop
from tests.ui.helpers import rows, texts, type_and_send
from tests.ui.screenshots import save_variants


def _notices(desktop: Desktop, kind: str) -> list[str]:
    return [i.text for i in rows(desktop.window.model, "turn_notice") if i.tool == kind]


def test_status_row_says_thinking_then_waiting_then_running_a_tool(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, qapp: QApplication
) -> None:
    window = desktop.window
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    fake_gemini.delay(1.5).reply_calls(("bash", {"command": "sleep 2; echo done"}))
    fake_gemini.reply_text("All done.")
    type_and_send(qtbot, window.input, "run the slow thing")
    qtbot.waitUntil(lambda: window.model.status == "Thinking…", timeout=5000)
    assert rows(window.model)[-1].kind == "status"
    save_variants(qapp, window, "status-thinking")
    qtbot.waitUntil(lambda: bool(window.approvals.cards()), timeout=10000)
    assert window.model.status == "Waiting for your answer about bash…"
    window.approvals.cards()[0].allow_once.click()
    qtbot.waitUntil(lambda: window.model.status == "Running the tool bash…", timeout=10000)
    assert rows(window.model)[-1].kind == "status", "the status stays the last row"
    save_variants(qapp, window, "status-running-tool")
    qtbot.waitUntil(lambda: "All done." in texts(window.model, "model"), timeout=15000)
    qtbot.waitUntil(lambda: window.model.status is None)


def test_a_stopped_turn_is_marked_and_a_failure_shows_in_full(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, qapp: QApplication
) -> None:
    window = desktop.window
    fake_gemini.delay(5).reply_text("too late")
    type_and_send(qtbot, window.input, "take your time")
    qtbot.waitUntil(lambda: window.model.status == "Thinking…", timeout=10000)
    window.stop_button.click()
    qtbot.waitUntil(lambda: bool(_notices(desktop, "stopped")), timeout=10000)
    assert window.model.status is None
    fake_gemini.reset()
    long_reason = "quota exceeded for the test; " * 8 + "the end of the message"
    fake_gemini.fail(400, times=1, message=long_reason)
    type_and_send(qtbot, window.input, "again")
    qtbot.waitUntil(lambda: window.failure() is not None, timeout=10000)
    assert "the end of the message" in (window.failure() or ""), "not truncated"
    notice = rows(window.model)[-1]
    assert notice.kind == "turn_notice" and notice.tool == "error"
    save_variants(qapp, window, "turn-stopped-and-failed")


@pytest.fixture
def tight_budget(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Desktop]:
    """The app with a budget of two tool calls per turn."""
    monkeypatch.setenv("KOROKU_MAX_TOOL_CALLS", "2")
    with running_desktop(qtbot) as desk:
        yield desk


def test_hitting_the_tool_budget_shows_a_notice_under_the_answer(
    tight_budget: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    tight_budget.runtime.policy.grant("read_file", "session")
    fake_gemini.endless_calls("read_file", {"path": "a.txt"})
    type_and_send(qtbot, tight_budget.window.input, "read forever")
    qtbot.waitUntil(lambda: bool(_notices(tight_budget, "budget")), timeout=20000)
    assert "2 tool calls" in _notices(tight_budget, "budget")[0]
    assert rows(tight_budget.window.model)[-1].kind == "turn_notice"


def test_waiting_for_another_front_ends_turn_is_a_status_row(
    desktop: Desktop, qtbot: QtBot
) -> None:
    window = desktop.window
    status = window.turn_status
    status.on_waiting_changed("waiting for the turn running in the terminal (pid 42)")
    assert window.model.status == "Waiting for the turn running in the terminal (pid 42)…"
    assert rows(window.model)[-1].kind == "status"
    status.on_waiting_changed("")
    assert window.model.status is None
    status.on_retry(2, 4, "HTTP 503")
    assert window.model.status == "Retrying (2 of 4, HTTP 503)…"


def test_a_rate_limited_request_shows_retrying_in_the_status_row(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = desktop.window
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    fake_gemini.fail(429, retry_delay="2s")
    fake_gemini.reply_text("After the wait.")
    type_and_send(qtbot, window.input, "hello")
    qtbot.waitUntil(
        lambda: (window.model.status or "").startswith("Retrying (2 of "), timeout=10000
    )
    qtbot.waitUntil(lambda: "After the wait." in texts(window.model, "model"), timeout=15000)
    qtbot.waitUntil(lambda: window.model.status is None)

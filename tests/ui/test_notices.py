"""A cut-off answer says so under the answer, in the chat window and in the quick-ask popup."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_replies import TextReply
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import texts, type_and_send


def test_max_tokens_answer_shows_a_notice_in_the_window(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.script(TextReply("The first half of the ans", finish_reason="MAX_TOKENS"))
    window = desktop.window
    type_and_send(qtbot, window.input, "tell me everything")
    qtbot.waitUntil(lambda: not desktop.bridge.busy and bool(texts(window.model, "notice")))
    assert texts(window.model, "model") == ["The first half of the ans"]
    (notice,) = texts(window.model, "notice")
    assert "incomplete" in notice and "MAX_TOKENS" in notice


def test_safety_stop_shows_a_notice_in_the_popup(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.script(TextReply("Here is how to", finish_reason="SAFETY"))
    desktop.show_quick_ask()
    popup = desktop.popup
    qtbot.waitExposed(popup)
    type_and_send(qtbot, popup.input, "something risky")
    qtbot.waitUntil(lambda: "safety" in popup.answer_text(), timeout=10000)
    assert "Here is how to" in popup.answer_text()


def test_compaction_progress_shows_in_the_status_bar(desktop: Desktop, qtbot: QtBot) -> None:
    desktop.runtime.compactor.progress(2, 5)
    assert "part 2 of 5" in desktop.window.statusBar().currentMessage()

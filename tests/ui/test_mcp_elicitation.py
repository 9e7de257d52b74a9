"""MCP elicitation in the chat window against server-everything: the inline card, typed
answers, Ctrl+Enter submits, Decline declines; grabbed at 400/900/1600 px in both themes."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.test_cli_mcp import _responses
from tests.ui.helpers import rows, type_and_send
from tests.ui.screenshots import WINDOW_SIZES, save_themed

TOOL = "ev_trigger-elicitation-request"


def _ask(desktop: Desktop, fake: FakeGemini, qtbot: QtBot, answer: str) -> None:
    manager = desktop.runtime.mcp
    assert manager is not None
    qtbot.waitUntil(lambda: [s.state for s in manager.statuses()] == ["ready"], timeout=60000)
    fake.reply_calls((TOOL, {}))
    fake.reply_text(answer)
    desktop.runtime.policy.grant(TOOL, "session")
    type_and_send(qtbot, desktop.window.input, "fill the form")
    qtbot.waitUntil(lambda: bool(desktop.mcp_elicitor.cards), timeout=60000)


def _raw(fake: FakeGemini) -> dict[str, object]:
    text = str(_responses(fake)[0]["response"]["result"])
    return dict(json.loads(text.split("Raw result: ", 1)[1]))


def test_the_card_asks_and_ctrl_enter_submits(
    ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    _ask(ev_desktop, fake_gemini, qtbot, "Thanks.")
    (card,) = ev_desktop.mcp_elicitor.cards
    name = card.fields["name"]
    assert isinstance(name, QLineEdit) and name.hasFocus()
    qtbot.keyClick(card, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert card.error.text() == "name: required"  # not sent without its required field
    integer = card.fields["integer"]
    assert isinstance(integer, QLineEdit)
    integer.setText("500")
    name.setText("Ada")
    qtbot.keyClick(card, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert "integer: between 1 and 100" in card.error.text()
    integer.setText("7")
    window = ev_desktop.window
    save_themed(window, "mcp-elicitation", WINDOW_SIZES)
    qtbot.keyClick(card, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(
        lambda: any(i.text == "Thanks." for i in rows(window.model, "model")), timeout=60000
    )
    raw = _raw(fake_gemini)
    content = raw["content"]
    assert raw["action"] == "accept" and isinstance(content, dict)
    assert content["name"] == "Ada" and content["integer"] == 7
    assert content["untitledSingleSelectEnum"] == "Monica"  # the default choice
    assert ev_desktop.mcp_elicitor.cards == []


def test_decline_on_the_card(ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot) -> None:
    _ask(ev_desktop, fake_gemini, qtbot, "Fine.")
    (card,) = ev_desktop.mcp_elicitor.cards
    qtbot.mouseClick(card.decline, Qt.MouseButton.LeftButton)
    model = ev_desktop.window.model
    qtbot.waitUntil(lambda: any(i.text == "Fine." for i in rows(model, "model")), timeout=60000)
    assert _raw(fake_gemini)["action"] == "decline"

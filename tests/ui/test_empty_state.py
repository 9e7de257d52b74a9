"""A new conversation shows what Koroku can do and example prompts that fill the input."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle
from tests.ui.helpers import texts, type_and_send
from tests.ui.screenshots import save_variants


def test_empty_state_until_the_first_message_and_after_a_clear(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, qapp: QApplication
) -> None:
    window = desktop.window
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    qtbot.waitUntil(lambda: not window.cards.isVisible())
    assert window.empty.isVisible() and not window.view.isVisible()
    save_variants(qapp, window, "chat-empty")
    example = window.empty.buttons[1]
    qtbot.mouseClick(example, Qt.MouseButton.LeftButton)
    assert window.input.toPlainText() == example.text()
    qtbot.waitUntil(lambda: window.focusWidget() is window.input)
    fake_gemini.reply_text("Here is the summary.")
    type_and_send(qtbot, window.input, window.input.toPlainText())
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=10000)
    qtbot.waitUntil(lambda: "Here is the summary." in texts(window.model, "model"), timeout=10000)
    assert window.view.isVisible() and not window.empty.isVisible()
    qtbot.waitUntil(lambda: not desktop.bridge.busy)
    desktop.bridge.clear()  # what the clear question's button does
    qtbot.waitUntil(lambda: window.empty.isVisible() and not window.view.isVisible())
    assert all(b.isVisible() for b in window.empty.buttons), "the example prompts are back"


def test_the_welcome_card_leaves_the_examples_their_room_in_a_narrow_window(
    desktop: Desktop, qtbot: QtBot
) -> None:
    """At 400 px the examples' wrapped lines make them taller than their size hint says; the
    welcome card scrolls within what is left and never lies under them."""
    window = desktop.window
    assert desktop.welcome is not None and window.cards.isVisible()
    assert window.empty.isVisible()
    for height in (760, 700, 640):
        window.resize(400, height)
        settle()
        cards, empty = window.cards.geometry(), window.empty.geometry()
        assert cards.bottom() < empty.top(), f"at 400x{height} the card overlaps the examples"
        layout = window.empty.layout()
        assert layout is not None
        assert empty.height() >= layout.minimumHeightForWidth(empty.width())

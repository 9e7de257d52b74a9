"""The quick-ask popup shows what the chat shows around an answer, in its own compact way:
a grounded answer's citation marks and sources as links, and the past passages Koroku
remembered for the question (the chat's "Remembered" chips)."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_grounding import grounded_reply
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import said_and_embedded
from tests.ui.helpers import type_and_send
from tests.ui.screenshots import save_screenshot


def ask_in_popup(desktop: Desktop, qtbot: QtBot, text: str) -> str:
    desktop.window.hide()
    desktop.show_quick_ask()
    popup = desktop.popup
    qtbot.waitExposed(popup)
    type_and_send(qtbot, popup.input, text)
    qtbot.waitUntil(
        lambda: not desktop.bridge.busy and popup.exchange_seq is not None, timeout=15000
    )
    qtbot.waitUntil(lambda: not popup.active)
    return popup.answer.toMarkdown()


def test_a_grounded_answer_in_the_popup_cites_and_links_its_sources(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    theme.apply(app, "light")
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    dialog = desktop.show_settings()
    dialog.web.search.setChecked(True)
    dialog.save_button.click()
    fake_gemini.reply_with(grounded_reply())
    shown = ask_in_popup(desktop, qtbot, "Who won the euro 2024?")
    assert "in the final. [1] This victory" in desktop.popup.answer_text()
    assert "Sources" in shown and "Google Search:" in shown
    assert "](https://vertexaisearch.cloud.google.com/" in shown  # links, clickable
    assert "[UEFA Euro 2024 winner](https://www.google.com/search?q=UEFA+Euro+2024" in shown
    save_screenshot(desktop.popup, "quick-ask-sources")


def test_the_popup_names_what_koroku_remembered_for_the_question(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    car = said_and_embedded(desktop, qtbot, "my car is crimson")
    fake_gemini.reply_text("It is crimson.")
    ask_in_popup(desktop, qtbot, "what colour is my automobile?")
    text = desktop.popup.answer_text()
    assert text.startswith(f"Remembered: #{car} (")
    assert "my car is crimson" in text and "It is crimson." in text
    save_screenshot(desktop.popup, "quick-ask-remembered")


def test_a_long_line_of_code_in_the_popup_wraps_and_never_scrolls_sideways(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    """A code block with a long line made the whole answer scroll sideways (Markdown's code
    lines do not break); it wraps like the chat's, in a monospace font."""
    line = "print('a fairly long line of code that goes on beyond the popup's width', step)"
    fake_gemini.reply_text(f"Try:\n\n```python\n{line}\n```\n\nDone.")
    ask_in_popup(desktop, qtbot, "show me code")
    popup = desktop.popup
    popup.resize(420, 360)
    qtbot.waitUntil(lambda: popup.answer.width() < 420)
    QApplication.processEvents()
    assert "Done." in popup.answer_text()
    bar = popup.answer.horizontalScrollBar()
    assert bar.maximum() == 0, f"the answer scrolls {bar.maximum()} px sideways"

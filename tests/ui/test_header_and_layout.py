"""The header's icon buttons, the thoughts toggle, per-answer thoughts, and narrow windows."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import rows, texts, type_and_send
from tests.ui.screenshots import save_variants


def test_thoughts_toggle_says_its_state_and_each_answer_opens_alone(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, qapp: QApplication
) -> None:
    window = desktop.window
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    fake_gemini.reply_text("Forty-two.", thought="The user wants the answer to everything.")
    type_and_send(qtbot, window.input, "the answer?")
    # The text streams in first; the thought row comes with the stored reply at the end.
    qtbot.waitUntil(lambda: "Forty-two." in texts(window.model, "model"), timeout=10000)
    qtbot.waitUntil(lambda: bool(rows(window.model, "thought")) and not desktop.bridge.busy)
    thought = rows(window.model, "thought")[0]
    row = window.model.row_of(thought)
    delegate = window.view.delegate

    def height() -> int:
        return delegate.sizeHint(QStyleOptionViewItem(), window.model.index(row)).height()

    folded = height()
    assert 0 < folded < 40, "a folded thought is one line, not hidden"
    button = window.thoughts_button
    assert button.toolTip().startswith("Show thoughts") and not button.isChecked()
    off_icon = button.icon().cacheKey()
    button.click()
    assert button.isChecked() and button.toolTip() == "Hide thoughts"
    assert button.text() == "Hide thoughts" and button.icon().cacheKey() != off_icon
    assert height() > folded
    button.click()
    assert height() == folded
    window.model.toggle_expanded(row)  # a click on this answer's thoughts
    assert height() > folded and not button.isChecked()
    save_variants(qapp, window, "chat-thought-open")


def test_the_window_fits_down_to_360_px(desktop: Desktop, qtbot: QtBot, qapp: QApplication) -> None:
    window = desktop.window
    window.show_meter(12_345, 100_000)
    for width in (360, 420):
        window.resize(width, 640)
        qapp.processEvents()
        assert window.width() == width
        header = window.header
        for button in header.buttons():
            assert button.isVisible() and button.toolTip()
            assert button.geometry().right() <= header.width()
            assert button.iconSize() == QSize(18, 18) and not button.icon().isNull()
        label = window.model_label
        assert label.isVisible() and label.width() >= label.sizeHint().width(), "model clipped"
        assert window.meter.isVisible() and "12.3k" in window.meter.toolTip()
        meter_right = window.meter.mapTo(window, window.meter.rect().bottomRight()).x()
        assert meter_right <= width
    window.resize(900, 640)
    qapp.processEvents()
    assert window.meter_label.isVisible()

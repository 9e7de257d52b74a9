"""Quick-ask popup round trip and the single-instance handshake."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, QSize
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.quick_ask.popup import SIZE_KEY, place_near
from koroku_desktop.ui.single_instance import send_command
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import quick_ask_into_the_chat, shown_popup, texts, type_and_send

ROOT = Path(__file__).resolve().parents[2]


def test_quick_ask_round_trip_then_open_in_chat(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    fake_gemini.reply_text("Paris is the capital of France.", chunks=4)
    quick_ask_into_the_chat(desktop)
    desktop.window.hide()
    desktop.show_quick_ask()
    popup = desktop.popup
    qtbot.waitExposed(popup)
    assert popup.input.hasFocus() or popup.focusWidget() is popup.input
    type_and_send(qtbot, popup.input, "capital of France?")
    qtbot.waitUntil(lambda: "Paris is the capital" in popup.answer_text(), timeout=10000)
    qtbot.waitUntil(lambda: not desktop.bridge.busy)
    assert popup.exchange_seq is not None
    popup.open_button.click()
    assert not popup.isVisible()
    assert desktop.window.isVisible()
    model = desktop.window.model
    assert texts(model, "user")[-1] == "capital of France?"
    assert "Paris is the capital of France." in texts(model, "model")
    assert model.row_of_seq(popup.exchange_seq) >= 0


def test_popup_escape_hides_and_size_is_remembered(desktop: Desktop, qtbot: QtBot) -> None:
    popup = shown_popup(desktop, qtbot)
    popup.resize(610, 333)
    qtbot.waitUntil(lambda: desktop.ui_settings.value(SIZE_KEY) == QSize(610, 333))
    qtbot.keyClick(popup.input, "\x1b")
    popup.hide()
    assert not popup.isVisible()
    desktop.ui_settings.sync()
    assert desktop.ui_settings.value(SIZE_KEY) == QSize(610, 333)


def test_popup_is_placed_inside_the_screen() -> None:
    area = QRect(0, 0, 1000, 800)
    size = QSize(400, 300)
    top_left = place_near(QPoint(990, 790), size, area)
    assert area.contains(QRect(top_left, size))
    assert place_near(QPoint(100, 100), size, area) == QPoint(112, 116)


def test_second_client_raises_the_running_window(desktop: Desktop, qtbot: QtBot) -> None:
    desktop.window.hide()
    name = desktop.server.name
    # A second QLocalSocket client (blocking) needs the server's loop: run it off-thread.
    import threading

    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(send_command(name, "show")))
    thread.start()
    qtbot.waitUntil(lambda: bool(result), timeout=5000)
    thread.join()
    assert result == [True]
    qtbot.waitUntil(desktop.window.isVisible)


def test_second_koroku_process_hands_over_and_exits(desktop: Desktop, qtbot: QtBot) -> None:
    desktop.window.hide()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "koroku_desktop", "quick-ask"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=30000)
    _out, err = proc.communicate()
    assert proc.returncode == 0, err.decode()
    qtbot.waitUntil(desktop.popup.isVisible)
    assert not desktop.window.isVisible()
    desktop.popup.hide()
    proc = subprocess.Popen(
        [sys.executable, "-m", "koroku_desktop"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=30000)
    assert proc.returncode == 0, proc.communicate()[1].decode()
    qtbot.waitUntil(desktop.window.isVisible)

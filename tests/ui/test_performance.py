"""Responsiveness during a long tool call, and a 10,000-message conversation in the view."""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import rows, texts, type_and_send


class StallProbe:
    """A 10 ms QTimer that records the longest gap between its ticks."""

    def __init__(self, parent: QObject) -> None:
        self.max_gap = 0.0
        self.ticks = 0
        self._last = time.perf_counter()
        self.timer = QTimer(parent)
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.max_gap = max(self.max_gap, now - self._last)
        self._last = now
        self.ticks += 1

    def start(self) -> None:
        self._last = time.perf_counter()
        self.timer.start()


def test_ui_stays_responsive_during_a_3_second_tool_call(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    desktop.runtime.policy.grant("bash", "session")
    assert desktop.warm_up is not None
    qtbot.waitUntil(desktop.warm_up.done, timeout=20000)
    fake_gemini.reply_calls(("bash", {"command": "sleep 3; echo slept"}))
    fake_gemini.reply_text("Slept well.")
    probe = StallProbe(desktop.window)
    probe.start()
    started = time.perf_counter()
    type_and_send(qtbot, desktop.window.input, "take a nap")
    qtbot.waitUntil(lambda: "Slept well." in texts(desktop.window.model, "model"), timeout=20000)
    probe.timer.stop()
    probe.timer.deleteLater()
    assert time.perf_counter() - started >= 3.0
    assert rows(desktop.window.model, "tool")[0].status == "ok"
    assert probe.ticks > 100
    assert probe.max_gap < 0.100, f"the event loop stalled for {probe.max_gap * 1000:.0f} ms"


def fake_conversation(n: int) -> list[StoredEvent]:
    """`n` alternating user/model messages with some Markdown."""
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "model"
        text = (
            f"Question number {i}?"
            if role == "user"
            else f"Answer **{i}** with a list:\n\n- one\n- two\n\n`code {i}` and more words " * 2
        )
        event = MessageEvent(role=role, parts=[TextPart(text=text)])
        out.append(StoredEvent(seq=i + 1, conversation_id="default", created_at=0.0, event=event))
    return out


def test_view_opens_10000_messages(desktop: Desktop, qtbot: QtBot) -> None:
    entries = fake_conversation(10_000)
    window = desktop.window
    window.set_history(entries)  # type: ignore[arg-type]
    assert window.model.rowCount() == 10_000
    qtbot.waitUntil(lambda: window.view.verticalScrollBar().maximum() > 10_000)
    bar = window.view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    window.view.viewport().repaint()
    qtbot.waitUntil(lambda: len(window.view.delegate._exact) > 0)
    # Virtualised: only the rows on screen were typeset, not 10,000 documents.
    assert len(window.view.delegate._exact) < 200
    bar.setValue(bar.maximum() // 2)
    qtbot.wait(50)
    assert len(window.view.delegate._exact) < 400

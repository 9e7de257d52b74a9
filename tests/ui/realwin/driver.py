"""Runs the real app on an X server at one size and theme and reports what a person would meet.

`python -m tests.ui.realwin.driver WIDTH HEIGHT THEME WORKDIR REPORT [SHOTS]` (DISPLAY and
QT_QPA_PLATFORM=xcb set by the caller). One process per size and theme: the first start
without a key, then a conversation on the fake Gemini server with approvals, every header
button, the shortcuts and sending while scrolled up. The report (JSON) lists, per check, what
was wrong; SHOTS (a folder) gets one screenshot per state.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFileDialog,
    QMessageBox,
    QScrollArea,
    QToolButton,
    QWidget,
)

from koroku_desktop.app.config import default_paths
from koroku_desktop.ui.app import Desktop, open_desktop
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_server import FakeGemini
from tests.ui.realwin.checks import clipped_texts
from tests.ui.realwin.scenes import seed_conversation

Report = dict[str, list[str]]

PICTURED = (
    *("first-start", "conversation", "approval", "approval-narrowed", "find", "conversations"),
    *("conversations-drop-down", "quick-ask", "quick-ask-into-chat"),
)
"""The states whose pictures are saved (the screenshot set: window-STATE-WxH-THEME.png)."""


async def until(condition: Callable[[], object], what: str, seconds: float = 10.0) -> None:
    """Wait (on the running loop) until `condition()` holds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not condition():
        if loop.time() > end:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def settle(rounds: int = 6) -> None:
    """Let queued events, zero-timers and layouts run."""
    for _ in range(rounds):
        await asyncio.sleep(0.01)


class Session:
    """One size and theme: the app, what was found and where pictures go."""

    def __init__(self, width: int, height: int, mode: str, work: Path, shots: Path | None):
        self.size = (width, height)
        self.mode = mode
        self.work = work
        self.shots = shots
        self.report: Report = {"clipped": [], "focus": [], "follow": [], "width": [], "errors": []}
        self.app = QApplication.instance()
        assert isinstance(self.app, QApplication)

    def look(self, top: QWidget, state: str) -> None:
        """Check every visible text in `top` and save its picture as `state`."""
        for problem in clipped_texts(top):
            self.report["clipped"].append(f"{state}: {problem}")
        if self.shots is not None and state in PICTURED:
            width, height = self.size
            name = f"window-{state}-{width}x{height}-{self.mode}.png"
            self.shots.mkdir(parents=True, exist_ok=True)
            top.grab().save(str(self.shots / name))

    def desktop(self, home: str) -> Desktop:
        os.environ["KOROKU_HOME"] = str(self.work / home)
        desk = open_desktop(self.app, default_paths(), use_tray=False)
        theme.apply(self.app, self.mode)
        desk.window.resize(*self.size)
        return desk

    async def typed_lands(self, desk: Desktop, after: str) -> None:
        """Type into whatever has the keyboard now (as X would) and check the message box got it."""
        await settle()
        box = desk.window.input
        box.clear()
        window = QGuiApplication.focusWindow()
        if window is None:
            self.report["focus"].append(f"after {after}: no window has the keyboard")
            return
        for key in (Qt.Key.Key_Z, Qt.Key.Key_Q):
            await act(lambda key=key: QTest.keyClick(window, key))
        if box.toPlainText() != "zq":
            widget = QApplication.focusWidget()
            where = type(widget).__name__ + "#" + widget.objectName() if widget else "nothing"
            self.report["focus"].append(
                f"after {after}: typed keys went to {where}, box has {box.toPlainText()!r}"
            )
        box.clear()


async def act(action: Callable[[], object]) -> None:
    """Do a person's action from a plain callback, not inside a task: a click or key may run
    Qt's event loop (a dialog), which runs other tasks, and a task must not be re-entered."""
    done = asyncio.get_running_loop().create_future()

    def run() -> None:
        try:
            action()
        finally:
            done.set_result(None)

    asyncio.get_running_loop().call_soon(run)
    await done
    await settle()


async def click(widget: QWidget) -> None:
    """A real left click in the middle of `widget`."""
    await act(
        lambda: QTest.mouseClick(widget, Qt.MouseButton.LeftButton, pos=widget.rect().center())
    )


async def press(key: Qt.Key, mods: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """Press a key in the window that has the keyboard (as X delivers it)."""
    window = QGuiApplication.focusWindow()
    assert window is not None, "no window has the keyboard"
    await act(lambda: QTest.keyClick(window, key, mods))


async def close_dialog(kind: type[QWidget]) -> bool:
    """Close the shown dialog of this kind with Esc (as a person would); True if there was one."""
    await settle()
    for top in QApplication.topLevelWidgets():
        if isinstance(top, kind) and top.isVisible():
            target = QApplication.focusWidget() or top
            await act(lambda target=target: QTest.keyClick(target, Qt.Key.Key_Escape))
            if top.isVisible():
                top.close()
                await settle()
            return True
    return False


async def started(desk: Desktop) -> bool:
    """Start `desk` with its window shown and active; dismiss the welcome card with a
    click if it shows (True then)."""
    await desk.start()
    await until(desk.window.isVisible, "the window")
    desk.window.activateWindow()
    await settle(10)
    if desk.welcome is None:
        return False
    await click(desk.welcome.ok_button)
    return True


async def first_start(s: Session) -> None:
    """No key yet: the welcome and setup cards read whole."""
    os.environ.pop("GEMINI_API_KEY", None)
    desk = s.desktop("first")
    await desk.start()
    await until(desk.window.isVisible, "the window")
    await settle(10)
    s.look(desk.window, "first-start")
    await desk.quit()


async def conversation(s: Session, fake: FakeGemini) -> None:
    """A conversation with every kind of row, approvals, buttons, shortcuts, follow."""
    os.environ["GEMINI_API_KEY"] = "test-key"
    desk = s.desktop("chat")
    seed_conversation(desk.runtime.log, desk.runtime.agent.conversation_id)
    window = desk.window
    if await started(desk):
        await s.typed_lands(desk, "Got it on the welcome card")
    window.view.scroll_to_bottom()
    await settle(10)
    s.look(window, "conversation")

    # The header's buttons.
    await click(window.thoughts_button)
    await s.typed_lands(desk, "the thoughts button")
    await click(window.thoughts_button)
    await s.typed_lands(desk, "the thoughts button (off)")
    await click(window.clear_button)
    await close_dialog(QMessageBox)
    await s.typed_lands(desk, "Cancel on the clear question")
    await click(window.history_button)
    await until(lambda: desk.history is not None and desk.history.isVisible(), "the viewer")
    await settle(10)
    assert desk.history is not None
    s.look(desk.history, "history")
    facts = desk.runtime.facts
    assert facts is not None
    facts.remember("default", "name", "Jan Novák, a translator from Brno.")
    facts.remember("default", "sister Anna", "Lives in Bergen with her two kids.", "person")
    desk.history.show_tab("Memory")
    assert desk.history.facts is not None
    await desk.history.facts.reload()
    await settle(10)
    s.look(desk.history, "history: the Memory tab with facts")
    desk.history.close()
    await s.typed_lands(desk, "closing History & memory")
    await click(window.settings_button)
    await until(lambda: desk.settings_dialog is not None, "settings")
    await settle(10)
    assert desk.settings_dialog is not None
    s.look(desk.settings_dialog, "settings")
    scroll = desk.settings_dialog.findChild(QScrollArea)
    assert scroll is not None
    scroll.ensureWidgetVisible(desk.settings_dialog.facts, 0, 0)
    await settle(10)
    s.look(desk.settings_dialog, "settings: what Koroku knows about you")
    await close_dialog(QDialog)
    await s.typed_lands(desk, "Esc on Settings")
    await press(Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    await s.typed_lands(desk, "Ctrl+L")

    # Approvals: Esc denies a dangerous two-line command, Ctrl+Enter allows a harmless one.
    fake.reply_calls(("bash", {"command": "dd if=/dev/zero bs=1M count=10 \\\n  of=/dev/sdb"}))
    fake.reply_text("I did not run it.")
    fake.reply_calls(("bash", {"command": "echo one &&\n  echo two"}))
    fake.reply_text("Both lines ran.")
    desk.bridge.send("wipe the stick")
    await until(lambda: bool(window.approvals.cards()), "the approval card")
    await settle(10)
    s.look(window, "approval")
    await narrowed_with_approval(s, window)
    await press(Qt.Key.Key_Escape)
    await until(lambda: not desk.bridge.busy, "the denied turn")
    await s.typed_lands(desk, "Esc on an approval")
    desk.bridge.send("say one and two")
    await until(lambda: bool(window.approvals.cards()), "the second approval card")
    await settle(4)
    await press(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: not window.approvals.cards(), "the allowed call")
    await s.typed_lands(desk, "Ctrl+Enter on an approval")
    await until(lambda: not desk.bridge.busy, "the allowed turn")

    # Send while scrolled up: the view follows to the new answer.
    bar = window.view.verticalScrollBar()
    bar.setValue(bar.minimum())
    await settle()
    fake.reply_text("Here is the answer to the newest question, at the bottom.")
    window.input.setPlainText("where does this go?")
    await click(window.send_button)
    await until(lambda: not desk.bridge.busy and desk.bridge.queued == [], "the answer")
    await settle(10)
    if bar.value() < bar.maximum() - 8:
        s.report["follow"].append(
            f"after sending while scrolled up the view is at {bar.value()} of {bar.maximum()}"
        )
    await s.typed_lands(desk, "the Send button")
    s.look(window, "answered")

    # Find, the shortcut sheet, Esc stopping a turn, a queued message removed.
    await press(Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    await until(window.find_bar.field.hasFocus, "the find field")
    window.find_bar.field.setText("largest")
    await until(lambda: "of" in window.find_bar.count_label.text(), "the matches")
    await settle(6)  # the count's new width is laid out in the next event passes
    s.look(window, "find")
    await press(Qt.Key.Key_Escape)
    await s.typed_lands(desk, "Esc in Find")
    await press(Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    sheet = window.shortcut_sheet
    await until(lambda: sheet is not None and sheet.isVisible(), "the shortcut sheet")
    assert sheet is not None
    s.look(sheet, "shortcuts")
    await press(Qt.Key.Key_Escape)
    await s.typed_lands(desk, "Esc on the shortcut sheet")
    fake.delay(30).reply_text("too late")
    window.input.setPlainText("take your time")
    await press(Qt.Key.Key_Return)
    await until(lambda: desk.bridge.busy, "the slow turn")
    window.input.setPlainText("and then this")
    await press(Qt.Key.Key_Return)
    await until(lambda: window.queued_strip.chips, "the queued chip")
    s.look(window, "queued")
    remove = window.queued_strip.chips[0].findChildren(QToolButton)[-1]
    await click(remove)
    await until(lambda: not desk.bridge.queued, "the queue emptied")
    await s.typed_lands(desk, "removing a queued message")
    await press(Qt.Key.Key_Escape)
    await until(lambda: not desk.bridge.busy, "the stopped turn")
    await s.typed_lands(desk, "Esc stopping a turn")
    fake.reset()

    # The Stop button, the model picker (opened with a click, chosen with the keys).
    fake.delay(30).reply_text("too late")
    window.input.setPlainText("another slow one")
    await press(Qt.Key.Key_Return)
    await until(lambda: window.stop_button.isVisible(), "the Stop button")
    await click(window.stop_button)
    await until(lambda: not desk.bridge.busy, "the stopped turn")
    await s.typed_lands(desk, "the Stop button")
    fake.reset()
    picker = window.composer.model_picker
    if picker.isVisible():
        before = picker.currentText()
        await click(picker)
        await settle(10)
        await press(Qt.Key.Key_Down)
        await press(Qt.Key.Key_Return)
        await until(lambda: desk.runtime.settings.model != before, "the picked model")
        await s.typed_lands(desk, "choosing a model beside Send")

    # The attach button's dialog, cancelled.
    await click(window.attach_button)
    await settle(10)
    await close_dialog(QFileDialog)
    await s.typed_lands(desk, "cancelling the file dialog")

    # Clear: the example prompts are back, and one of them fills the box.
    await click(window.clear_button)
    await settle(6)
    box = next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()
    )
    clear = next(b for b in box.buttons() if b.text() == "Clear conversation")
    await click(clear)
    await until(window.empty.isVisible, "the example prompts after a clear")
    await settle(6)
    s.look(window, "cleared")
    await click(window.empty.buttons[0])
    await s.typed_lands(desk, "an example prompt")
    await desk.quit()


NARROWED = 420
"""The width a person narrows the window to (half a small screen) while an approval waits."""


async def narrowed_with_approval(s: Session, window: QWidget) -> None:
    """The approval card never holds the window wide: it arrives without widening the window,
    the window narrows to 420 px with it waiting, and then every text in it reads whole."""
    width, height = s.size
    if window.width() != width:
        s.report["width"].append(
            f"the approval card widened the {width} px window to {window.width()}"
        )
    for step in [w for w in (700, 560) if w < width]:  # as a drag passes through
        window.resize(step, height)
        await settle(10)
        for problem in clipped_texts(window):  # the card, the composer beside a running turn
            s.report["clipped"].append(f"approval at {step} px: {problem}")
    window.resize(NARROWED, height)
    await settle(10)
    if window.width() > NARROWED:
        s.report["width"].append(
            f"narrowed to {NARROWED} px with an approval waiting, the window stays {window.width()}"
        )
    s.look(window, "approval-narrowed")
    window.resize(width, height)
    await settle(10)


async def main(s: Session) -> None:
    fake = FakeGemini().start()
    os.environ["GOOGLE_GEMINI_BASE_URL"] = fake.base_url
    try:
        from tests.ui.realwin.sidebar_scene import conversations

        scenes = (first_start, lambda s: conversation(s, fake), lambda s: conversations(s, fake))
        for scene in scenes:
            try:
                await scene(s)
            except Exception as exc:  # noqa: BLE001 — reported, so the other scenes still run
                s.report["errors"].append(f"{type(exc).__name__}: {exc}")
    finally:
        fake.stop()


def run(
    argv: list[str],
    scenes: Callable[[Session], Coroutine[Any, Any, None]] = main,
    name: str = "koroku-realwin",
) -> int:
    """One window size and theme (`argv`: width, height, mode, work dir, report file, and
    the screenshots' folder if any) through `scenes`, on a qasync loop; the report as JSON."""
    width, height, mode, work, out = int(argv[0]), int(argv[1]), argv[2], Path(argv[3]), argv[4]
    shots = Path(argv[5]) if len(argv) > 5 else None
    import qasync

    app = QApplication([name])
    app.setQuitOnLastWindowClosed(False)
    session = Session(width, height, mode, work, shots)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(scenes(session))
    Path(out).write_text(json.dumps(session.report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))

"""The UI keeps working while a long tool call runs, and a 10,000-message conversation opens.

How long the event loop stalls is a measurement, not a test: see benchmarks/bench_ui.py.
"""

from __future__ import annotations

import gc
import shlex
from pathlib import Path

import qasync
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.message_model import SHOWN_AT_ONCE
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import running_desktop
from tests.ui.helpers import rows, texts, type_and_send


def test_the_ui_keeps_working_while_a_tool_call_runs(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, workspace: Path
) -> None:
    """The command waits for a file the test creates only after using the window meanwhile:
    a tool run on the event loop would block that forever (and the test time out)."""
    desktop.runtime.policy.grant("bash", "session")
    gate = workspace / "go"
    command = f"while [ ! -e {shlex.quote(str(gate))} ]; do sleep 0.02; done; echo slept"
    fake_gemini.reply_calls(("bash", {"command": command}))
    fake_gemini.reply_text("Slept well.")
    type_and_send(qtbot, desktop.window.input, "take a nap")
    qtbot.waitUntil(
        lambda: [r.status for r in rows(desktop.window.model, "tool")] == ["running"],
        timeout=20000,
    )
    fired: list[bool] = []
    QTimer.singleShot(0, lambda: fired.append(True))
    qtbot.waitUntil(lambda: bool(fired))
    qtbot.keyClicks(desktop.window.input, "typed while it runs")  # type: ignore[no-untyped-call]
    assert desktop.window.input.toPlainText() == "typed while it runs"
    assert desktop.bridge.busy, "the command is still waiting"
    gate.touch()
    qtbot.waitUntil(lambda: "Slept well." in texts(desktop.window.model, "model"), timeout=20000)
    assert rows(desktop.window.model, "tool")[0].status == "ok"


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
    window, model = desktop.window, desktop.window.model
    window.set_history(entries)  # type: ignore[arg-type]
    # The newest messages get rows at once; older ones are held until scrolled to.
    assert model.rowCount() == SHOWN_AT_ONCE
    assert model.held == 10_000 - SHOWN_AT_ONCE
    assert model.items()[-1].seq == 10_000
    bar = window.view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    window.view.viewport().repaint()
    qtbot.waitUntil(lambda: len(window.view.delegate._exact) > 0)
    # Virtualised: only the rows on screen were typeset, not 10,000 documents.
    assert len(window.view.delegate._exact) < 200
    # Scrolling to the top gives the held messages rows, a page at a time, in place.
    while model.held:
        held = model.held
        bar.setValue(0)
        qtbot.waitUntil(lambda held=held: model.held < held, timeout=5000)  # type: ignore[misc]
        qtbot.waitUntil(lambda: bar.value() > 0, timeout=5000)  # not jumped to the new top
    assert [i.seq for i in model.items()] == list(range(1, 10_001))
    assert len(window.view.delegate._exact) < 400


def test_jumping_to_an_old_message_gives_it_rows(desktop: Desktop, qtbot: QtBot) -> None:
    window, model = desktop.window, desktop.window.model
    window.set_history(fake_conversation(3_000))  # type: ignore[arg-type]
    assert model.held and all((i.seq or 0) > 42 for i in model.items())
    window.scroll_to_seq(43)
    row = model.row_of_seq(43)
    assert model.item(row).seq == 43
    qtbot.waitUntil(
        lambda: window.view.indexAt(window.view.viewport().rect().topLeft()).row() == row
    )
    assert model.items()[-1].seq == 3_000, "the newest rows stay"


def test_the_startup_heap_is_frozen_out_of_full_collections_until_quit(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    """Full garbage collections skip what start-up made (they stalled streaming); a quit gives
    it back, so a later app in the same process does not keep this one's objects."""
    assert gc.get_freeze_count() == 0
    with running_desktop(qtbot) as desk:
        qtbot.waitUntil(lambda: desk.warm_up is not None and desk.warm_up.done(), timeout=30000)
        assert gc.get_freeze_count() > 10_000
    assert gc.get_freeze_count() == 0


def test_an_app_started_in_the_tray_warms_the_sdk_up_when_a_window_first_opens(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    """Unused in the tray, the app does not hold the Gemini SDK (about 25 MiB); the first
    window opened starts the warm-up, so the first question does not wait for the import."""
    with running_desktop(qtbot, show_window=False) as desk:
        assert desk.runtime.model.has_key
        assert desk.warm_up is None, "warmed up while nobody opened a window"
        desk.show_quick_ask()
        qtbot.waitUntil(lambda: desk.warm_up is not None and desk.warm_up.done(), timeout=30000)
        first = desk.warm_up
        desk.show_chat()
        assert desk.warm_up is first, "warmed up once"

"""The real desktop app runs on what the composition root built: a test hands it a model.

`Desktop` receives its runtime (built by `build_runtime`, with the bridge as approver), so the
whole app, window, bridge and log included, runs its turns on an in-process `FakeChatModel`
while the Gemini server (for embeddings and the SDK's warm-up) stays the fake one.
"""

from __future__ import annotations

import qasync
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.app.config import default_paths
from koroku_desktop.app.runtime import build_runtime
from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import TextPart, visible_text
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.bridge import AgentBridge
from tests.fakes.chat_model import FakeChatModel
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import running_desktop
from tests.ui.helpers import texts, type_and_send


def echo(request: ModelRequest) -> str:
    said = [p.text for p in request.contents[-1].parts if isinstance(p, TextPart)]
    return f"the fake model heard: {said[-1]}"  # after the time note


def test_desktop_takes_the_runtime_it_is_handed(qtbot: QtBot, qapp: QApplication) -> None:
    bridge = AgentBridge()
    runtime = build_runtime(bridge, default_paths(), model=FakeChatModel(echo))
    desk = Desktop(qapp, runtime, bridge, use_tray=False)
    try:
        assert desk.runtime is runtime and desk.bridge is bridge and bridge.parent() is desk
        assert runtime.agent.approver is bridge
    finally:
        runtime.close()
        for widget in (desk.popup, desk.window):
            widget.deleteLater()
        desk.deleteLater()
        qtbot.wait(10)


def test_the_desktop_runs_its_turns_on_the_model_handed_to_it(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini
) -> None:
    model = FakeChatModel(echo)
    with running_desktop(qtbot, model) as desk:
        if desk.welcome is not None:
            desk.welcome.ok_button.click()
        type_and_send(qtbot, desk.window.input, "hello from the window")
        expected = "the fake model heard: hello from the window"
        qtbot.waitUntil(lambda: texts(desk.window.model, "model") == [expected], timeout=15000)
        qtbot.waitUntil(lambda: not desk.bridge.busy, timeout=15000)
        assert len(model.requests) == 1
        assert fake_gemini.generate_requests() == []  # Gemini was never asked for a reply
        replies = [
            visible_text(e.event.parts)
            for e in desk.runtime.log.entries("default")
            if isinstance(e, StoredEvent)
            and isinstance(e.event, MessageEvent)
            and e.event.role == "model"
        ]
        assert replies == [expected]

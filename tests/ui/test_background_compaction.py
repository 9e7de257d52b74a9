"""Opening a long history compacts it in the background: the window answers meanwhile, quitting
cancels it with nothing written, and the next start compacts it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.agent import loop
from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from koroku_desktop.app.config import default_paths
from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from tests.fakes.gemini_replies import ReceivedRequest, Reply, TextReply
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import running_desktop
from tests.ui.helpers import texts, type_and_send

GUARD_S = 30.0


def _kinds(db: Path) -> list[str]:
    with SqliteEventLog(db) as log:
        return [
            e.event.kind for e in log.entries("default", limit=1_000) if isinstance(e, StoredEvent)
        ]


def test_quitting_mid_compaction_writes_nothing_and_the_next_start_compacts(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loop, "LIVE_TAIL_LIMIT", 10)  # 60 events = a "long" history
    db = default_paths().db
    with SqliteEventLog(db) as log:
        log.append(
            "default",
            [
                MessageEvent(role="user" if n % 2 == 0 else "model", parts=[TextPart(text=f"m{n}")])
                for n in range(60)
            ],
        )
    summarising, gate = threading.Event(), threading.Event()

    def stuck(request: ReceivedRequest) -> Reply:
        if request.system_text == SUMMARIZER_INSTRUCTION:
            summarising.set()
            gate.wait(GUARD_S)
            return TextReply("SUMMARY too late")
        return TextReply("answered meanwhile")

    fake_gemini.set_fallback(stuck)
    try:
        with running_desktop(qtbot) as desk:
            qtbot.waitUntil(summarising.is_set, timeout=int(GUARD_S * 1000))
            assert desk.runtime.compactor.running
            type_and_send(qtbot, desk.window.input, "are you there?")
            qtbot.waitUntil(
                lambda: "answered meanwhile" in texts(desk.window.model, "model"), timeout=30000
            )
            assert desk.runtime.compactor.running  # the turn did not wait for it
        # Quit cancelled it: the turn is in the log, no compaction (whole or partial) is.
        kinds = _kinds(db)
        assert "compaction" not in kinds and kinds[-1] == "message"
    finally:
        gate.set()

    fake_gemini.set_fallback(
        lambda r: TextReply("SUMMARY" if r.system_text == SUMMARIZER_INSTRUCTION else "ok")
    )
    with running_desktop(qtbot) as desk:
        compactor = desk.runtime.compactor
        qtbot.waitUntil(lambda: compactor.task is not None and not compactor.running)
        assert desk.runtime.agent.view.summary is not None
    assert _kinds(db).count("compaction") == 1

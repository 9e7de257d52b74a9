"""A sync that places another device's turn before this device's unpushed one: the open
chat and the live context are rebuilt in the one order (the hub's, then unpushed events),
with a real PostgreSQL hub and the real app."""

from __future__ import annotations

from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.runtime import CONVERSATION_ID
from koroku_desktop.store.event_log import SqliteEventLog
from tests.fakes.gemini_server import FakeGemini
from tests.sync.conftest import hub, hub_url, make_device, pg_server  # noqa: F401 (fixtures)
from tests.sync.pg_server import PASSWORD
from tests.ui.conftest import running_desktop
from tests.ui.helpers import texts


def turn(path: Path, writer: str, question: str) -> None:
    with SqliteEventLog(path, writer=writer) as log:
        log.append(
            CONVERSATION_ID,
            [
                MessageEvent(role="user", origin="person", parts=[TextPart(text=question)]),
                MessageEvent(role="model", origin="model", parts=[TextPart(text="noted")]),
            ],
        )


@pytest.mark.timeout(300)
def test_the_chat_is_rebuilt_when_a_sync_puts_another_devices_turn_first(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    hub_url: str,  # noqa: F811
    koroku_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    other = make_device(tmp_path, "B", hub_url)
    turn(other.home / "koroku.db", "ask@B", "written on B")
    assert "pushed 2 events" in other.sync()
    koroku_home.mkdir(parents=True, exist_ok=True)
    turn(koroku_home / "koroku.db", "ask@A", "written here, not pushed yet")
    monkeypatch.setenv("KOROKU_SYNC_URL", hub_url)
    with running_desktop(qtbot) as desk:
        qtbot.waitUntil(lambda: desk.window.sync_label.text() == "Sync: up to date", timeout=30_000)
        wanted = ["written on B", "written here, not pushed yet"]
        qtbot.waitUntil(lambda: texts(desk.window.model, "user") == wanted, timeout=10_000)
        view = desk.runtime.agent.view
        said = [
            p.text
            for m in view.messages
            if isinstance(m.event, MessageEvent) and m.event.role == "user"
            for p in m.event.parts
            if isinstance(p, TextPart)
        ]
        assert said == wanted

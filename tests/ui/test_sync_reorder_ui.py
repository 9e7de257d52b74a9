"""A sync that places another device's turn before this device's unpushed one — made by the
app itself or by `koroku sync` in another process on the same data dir: the open chat and
the live context are rebuilt in the one order (the hub's, then unpushed events), with a real
PostgreSQL hub and the real app."""

from __future__ import annotations

from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.app.runtime import CONVERSATION_ID
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_server import FakeGemini
from tests.sync.conftest import Device, make_device
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


def sent_by_person(desk: Desktop) -> list[str]:
    """The person's words in the live context the agent holds, in order."""
    return [
        p.text
        for m in desk.runtime.agent.view.messages
        if isinstance(m.event, MessageEvent) and m.event.role == "user"
        for p in m.event.parts
        if isinstance(p, TextPart)
    ]


WANTED = ["written on B", "written here, not pushed yet"]
"""The one order: B's turn reached the hub first; this device's is not pushed yet."""


@pytest.fixture
def apart(
    hub_url: str,
    koroku_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """Device B pushed a turn to the hub; this data dir holds a turn not pushed yet. The
    hub's URL."""
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    other = make_device(tmp_path, "B", hub_url)
    turn(other.home / "koroku.db", "ask@B", WANTED[0])
    assert "pushed 2 events" in other.sync()
    koroku_home.mkdir(parents=True, exist_ok=True)
    turn(koroku_home / "koroku.db", "ask@A", WANTED[1])
    return hub_url


@pytest.mark.timeout(300)
def test_the_chat_is_rebuilt_when_a_sync_puts_another_devices_turn_first(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    apart: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KOROKU_SYNC_URL", apart)
    with running_desktop(qtbot) as desk:
        qtbot.waitUntil(lambda: desk.window.sync_label.text() == "Sync: up to date", timeout=30_000)
        qtbot.waitUntil(lambda: texts(desk.window.model, "user") == WANTED, timeout=10_000)
        assert sent_by_person(desk) == WANTED


@pytest.mark.timeout(300)
def test_the_chat_is_rebuilt_when_another_process_syncs_the_data_dir(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    apart: str,
    koroku_home: Path,
) -> None:
    """The app has no hub of its own; `koroku sync` in a terminal pulls into its data dir."""
    with running_desktop(qtbot) as desk:
        assert desk.runtime.sync is None
        assert texts(desk.window.model, "user") == WANTED[1:]
        terminal = Device(koroku_home, workspace, apart)  # same data dir, another process
        assert "pulled 2 events" in terminal.sync()
        qtbot.waitUntil(lambda: texts(desk.window.model, "user") == WANTED, timeout=10_000)
        assert sent_by_person(desk) == WANTED

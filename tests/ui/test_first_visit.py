"""The first visit to a conversation shows its page at once and reads its live context after
(ui/live_loads.py): the switch returns while the read is held by a gate, the composer stays
usable (a message sent meanwhile is shown queued and sent once the agent is ready, into the
conversation chosen, once), the context meter says "…" until it is known, regenerate and edit
are offered once the agent is ready, and a switch on
to a third conversation during the read ends there with nothing sent to the one passed."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtGui import QKeySequence
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import StoredEvent, SupersededEvent
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.ui.app import Desktop
from tests.fakes.gemini_server import FakeGemini
from tests.support.builders import model, user
from tests.ui.conftest import run, running_desktop
from tests.ui.helpers import rows, said_in, texts, titled_replies, type_and_send


@dataclass
class LiveGate:
    """Holds the live-context reads of one conversation until opened (a real read after)."""

    log: SqliteEventLog
    conversation_id: str = ""
    entered: threading.Event = field(default_factory=threading.Event)
    opened: threading.Event = field(default_factory=threading.Event)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        read = self.log.load_live

        def gated(conversation_id: str, *args: Any, **kwargs: Any) -> Any:
            if conversation_id == self.conversation_id:
                self.entered.set()
                assert self.opened.wait(30), "the test never opened the gate"
            return read(conversation_id, *args, **kwargs)

        monkeypatch.setattr(self.log, "load_live", gated)


@pytest.fixture
def desk(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
) -> Iterator[Desktop]:
    with running_desktop(qtbot, titled_replies()) as desktop:
        if desktop.welcome is not None:
            desktop.welcome.ok_button.click()
            desktop.welcome = None
        yield desktop


def conversation(desk: Desktop, qtbot: QtBot, title: str, *said: str) -> str:
    """A conversation with `said` (the person's, each answered) in the log, listed."""
    book = desk.runtime.conversations
    assert book is not None
    made = book.create(title).id
    for text in said:
        desk.runtime.log.append(made, [user(text), model(f"re: {text}")])
    run(qtbot, desk.conversations.load())
    return made


def replaced(desk: Desktop, conversation_id: str) -> list[str]:
    """Why turns of the conversation were replaced (its `superseded` events)."""
    entries = desk.runtime.log.entries(conversation_id)
    return [
        e.event.reason
        for e in entries
        if isinstance(e, StoredEvent) and isinstance(e.event, SupersededEvent)
    ]


def switched_while_held(
    desk: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, LiveGate]:
    """A conversation "Birds" (the person said "owls"), switched to: the switch is over
    while the read of its live context is held by the gate."""
    b = conversation(desk, qtbot, "Birds", "owls")
    gate = LiveGate(desk.runtime.log, b)
    gate.install(monkeypatch)
    assert run(qtbot, desk.conversations.switch(b)) is True
    qtbot.waitUntil(gate.entered.is_set)
    return b, gate


def test_a_message_sent_while_the_live_context_is_read_waits_and_lands_there_once(
    desk: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = desk.window
    b, gate = switched_while_held(desk, qtbot, monkeypatch)
    assert texts(window.model, "user") == ["owls"] and window.windowTitle() == "Birds — Koroku"
    assert window.meter_label.text() == "context …"
    live = desk.conversations.live
    assert live is not None and not live.done()

    type_and_send(qtbot, window.input, "and herons?")
    qtbot.waitUntil(lambda: desk.bridge.queued == ["and herons?"])
    assert window.input.toPlainText() == "" and window.queued_strip.isVisible()

    gate.opened.set()
    qtbot.waitUntil(lambda: "re: and herons?" in texts(window.model, "model"), timeout=10000)
    qtbot.waitUntil(lambda: not desk.bridge.busy)
    assert said_in(desk, b) == ["owls", "re: owls", "and herons?", "re: and herons?"]
    assert texts(window.model, "user") == ["owls", "and herons?"]
    assert desk.bridge.queued == [] and live.done()
    assert window.meter_label.text().startswith("context ")
    assert window.meter_label.text() != "context …"


def test_a_switch_on_during_the_read_ends_in_the_last_choice_with_nothing_sent_to_the_other(
    desk: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = desk.window
    start = desk.runtime.agent.conversation_id
    c = conversation(desk, qtbot, "Cats", "lions")
    b, gate = switched_while_held(desk, qtbot, monkeypatch)
    assert run(qtbot, desk.conversations.switch(c)) is True  # B's read still held
    assert desk.runtime.agent.conversation_id == c
    assert texts(window.model, "user") == ["lions"] and window.windowTitle() == "Cats — Koroku"
    type_and_send(qtbot, window.input, "and tigers?")
    qtbot.waitUntil(lambda: "re: and tigers?" in texts(window.model, "model"), timeout=10000)
    qtbot.waitUntil(lambda: not desk.bridge.busy)

    gate.opened.set()  # B's read ends after all: kept for a return, not shown
    assert desk.runtime.pool is not None
    behind = desk.runtime.pool.agent_of(b)
    assert behind is not None
    qtbot.waitUntil(lambda: behind.loaded, timeout=10000)
    assert said_in(desk, c) == ["lions", "re: lions", "and tigers?", "re: and tigers?"]
    assert said_in(desk, b) == ["owls", "re: owls"]
    assert desk.runtime.agent.conversation_id == c
    assert window.meter_label.text() != "context …"

    # Chosen one after the other in the sidebar (the second while the first still switches):
    # the last choice wins, and a message goes there only.
    desk.conversations.choose(start)  # not in the registry yet (nothing said): not found
    desk.conversations.choose(c)
    desk.conversations.choose(b)
    qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id == b, timeout=10000)
    qtbot.waitUntil(lambda: not desk.conversations.switching)
    type_and_send(qtbot, window.input, "and eagles?")
    qtbot.waitUntil(lambda: "re: and eagles?" in texts(window.model, "model"), timeout=10000)
    assert said_in(desk, b)[-2:] == ["and eagles?", "re: and eagles?"]
    assert "and eagles?" not in said_in(desk, start) + said_in(desk, c)


def test_regenerate_and_edit_are_offered_once_the_live_context_is_read(
    desk: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = desk.window
    b, gate = switched_while_held(desk, qtbot, monkeypatch)
    answer = rows(window.model, "model")[-1]
    assert answer.actions == () and window.last_turn.replaceable() is None  # not known yet

    gate.opened.set()
    qtbot.waitUntil(lambda: rows(window.model, "model")[-1].actions == ("regenerate",))
    qtbot.keySequence(window, QKeySequence("Ctrl+Shift+R"))
    qtbot.waitUntil(lambda: replaced(desk, b) == ["regenerate"], timeout=10000)
    qtbot.waitUntil(lambda: not desk.bridge.busy)
    assert texts(window.model, "user") == ["owls"] and texts(window.model, "model") == ["re: owls"]


def test_a_live_context_that_cannot_be_read_says_so_and_the_page_stays(
    desk: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = desk.window
    b = conversation(desk, qtbot, "Birds", "owls")
    read = desk.runtime.log.load_live

    def broken(conversation_id: str, *args: Any, **kwargs: Any) -> Any:
        if conversation_id == b:
            raise sqlite3.OperationalError("disk I/O error")
        return read(conversation_id, *args, **kwargs)

    monkeypatch.setattr(desk.runtime.log, "load_live", broken)
    assert run(qtbot, desk.conversations.switch(b)) is True
    qtbot.waitUntil(lambda: window.notice.isVisibleTo(window))
    assert window.notice.text() == "Could not read the conversation: disk I/O error"
    assert texts(window.model, "user") == ["owls"] and window.meter_label.text() == "context …"

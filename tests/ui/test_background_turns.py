"""A turn goes on in its own conversation while the person switches to another: the sidebar
marks it running (or needing them, when its approval waits), a turn in the conversation
shown runs meanwhile under its own lease, Stop stops only the shown one, coming back shows
the turn's progress and its reply, quit ends both cleanly, and a terminal's `koroku ask`
in another conversation runs while the app's turn does (real `koroku` processes)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.titles import TITLE_INSTRUCTION
from koroku_desktop.app.config import default_paths
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import FunctionResponsePart, visible_text
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.sidebar import NEEDS_YOU, RUNNING
from tests.fakes.chat_model import FakeChatModel, FakeReply, call
from tests.fakes.gemini_replies import TextReply
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import run, running_desktop
from tests.ui.helpers import (
    ask,
    finish,
    koroku,
    listed,
    plain,
    quick_ask_into_the_chat,
    said_in,
    texts,
    type_and_send,
)


@dataclass
class Gated(FakeChatModel):
    """Answers `re: <message>`; a message with `slow` waits for `gate`, one with `stream`
    streams `Half an answer` first and then waits, one with `write` asks to write a file
    (after `gate` when it also says `slow`)."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)

    async def generate(
        self, request: ModelRequest, on_text_delta: Callable[[str], None] | None = None
    ) -> MessageEvent:
        said = plain(visible_text(request.contents[-1].parts))
        if "stream" in said and on_text_delta is not None:
            on_text_delta("Half an answer")
            await self.gate.wait()
        return await super().generate(request, on_text_delta)


def gated() -> Gated:
    async def reply(request: ModelRequest) -> FakeReply:
        last = request.contents[-1]
        said = plain(visible_text(last.parts))
        if request.system_instruction == TITLE_INSTRUCTION:
            return "Titled"
        if any(isinstance(p, FunctionResponsePart) for p in last.parts):
            return "Written."
        if "slow" in said:
            await model.gate.wait()
        if "write" in said:
            return [call("write_file", path="notes.txt", content="new\n")]
        return f"re: {said}"

    model = Gated(reply)
    return model


@pytest.fixture
def gated_desk(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> Iterator[tuple[Desktop, Gated]]:
    """The app on a `gated()` model, window shown."""
    model = gated()
    with running_desktop(qtbot, model) as desk:
        yield desk, model


def working(desk: Desktop, conversation_id: str) -> bool:
    assert desk.runtime.pool is not None
    agent = desk.runtime.pool.agent_of(conversation_id)
    return agent is not None and agent.busy


def asked(model: FakeChatModel, message: str) -> bool:
    """Whether the model got a request ending with `message` (its turn runs)."""
    return any(plain(visible_text(r.contents[-1].parts)) == message for r in model.requests)


def marked(desk: Desktop, mark: str) -> list[str]:
    return [t for t in listed(desk) if t.endswith(mark)]


def leave_running(qtbot: QtBot, desk: Desktop, message: str) -> tuple[str, str]:
    """Send `message` in the first conversation and, while its turn runs, start a new one
    (a switch that does not wait): (the first's id, the new one's)."""
    ask(qtbot, desk, "hello a")
    first = desk.runtime.agent.conversation_id
    type_and_send(qtbot, desk.window.input, message)
    qtbot.waitUntil(lambda: working(desk, first))
    other = run(qtbot, desk.conversations.start_new())
    assert other is not None and desk.runtime.agent.conversation_id == other
    return first, other


def test_a_turn_goes_on_while_another_conversation_is_shown_and_used_and_shows_on_return(
    gated_desk: tuple[Desktop, Gated], qtbot: QtBot
) -> None:
    desk, model = gated_desk
    window = desk.window
    ask(qtbot, desk, "hello a")
    first = desk.runtime.agent.conversation_id
    type_and_send(qtbot, window.input, "stream a long one")
    qtbot.waitUntil(lambda: "Half an answer" in texts(window.model, "model"), timeout=10000)
    assert window.stop_button.isVisible()

    other = run(qtbot, desk.conversations.start_new())  # a switch while the turn runs
    assert other is not None and desk.runtime.agent.conversation_id == other
    assert window.model.rowCount() == 0 and not window.stop_button.isVisible()
    qtbot.waitUntil(lambda: len(marked(desk, RUNNING)) == 1, timeout=5000)
    assert working(desk, first)
    ask(qtbot, desk, "hello b")  # its own turn, under its own lease, meanwhile
    assert working(desk, first)
    assert "Half an answer" not in texts(window.model, "model")

    assert run(qtbot, desk.conversations.switch(first)) is True
    assert texts(window.model, "user")[-1] == "stream a long one"
    assert texts(window.model, "model")[-1] == "Half an answer"  # streamed so far
    assert window.stop_button.isVisible() and desk.bridge.busy
    model.gate.set()
    qtbot.waitUntil(lambda: "re: stream a long one" in texts(window.model, "model"), timeout=10000)
    qtbot.waitUntil(lambda: not window.stop_button.isVisible())
    assert "Half an answer" not in texts(window.model, "model")
    qtbot.waitUntil(lambda: not marked(desk, RUNNING), timeout=5000)
    assert said_in(desk, first)[-2:] == ["stream a long one", "re: stream a long one"]
    assert said_in(desk, other) == ["hello b", "re: hello b"]
    assert not working(desk, other)


def test_an_approval_asked_in_a_conversation_not_shown_waits_for_the_person(
    gated_desk: tuple[Desktop, Gated], qtbot: QtBot, workspace: Path
) -> None:
    desk, model = gated_desk
    window = desk.window
    first, other = leave_running(qtbot, desk, "slow, then write my notes")
    model.gate.set()  # the turn left behind now asks to write
    qtbot.waitUntil(lambda: len(marked(desk, NEEDS_YOU)) == 1, timeout=10000)
    assert desk.tray is not None
    qtbot.waitUntil(lambda: desk.tray is not None and desk.tray.state == "approval")
    assert not window.approvals.cards()
    assert not (workspace / "notes.txt").exists()
    ask(qtbot, desk, "hello b")  # the conversation shown is not held up by it

    assert run(qtbot, desk.conversations.switch(first)) is True
    qtbot.waitUntil(lambda: bool(window.approvals.cards()), timeout=5000)
    card = window.approvals.cards()[0]
    assert card.request.tool == "write_file"
    card.allow_once.click()
    qtbot.waitUntil(lambda: "Written." in texts(window.model, "model"), timeout=10000)
    assert (workspace / "notes.txt").read_text() == "new\n"
    qtbot.waitUntil(lambda: not marked(desk, NEEDS_YOU) and not marked(desk, RUNNING))
    assert "Written." in said_in(desk, first) and "Written." not in said_in(desk, other)


def test_stop_stops_only_the_shown_conversations_turn(
    gated_desk: tuple[Desktop, Gated], qtbot: QtBot
) -> None:
    desk, model = gated_desk
    window = desk.window
    first, other = leave_running(qtbot, desk, "slow a")
    type_and_send(qtbot, window.input, "slow b")
    qtbot.waitUntil(lambda: asked(model, "slow b"), timeout=5000)
    assert window.stop_button.isVisible()
    window.stop_button.click()
    qtbot.waitUntil(
        lambda: "You stopped this turn." in texts(window.model, "turn_notice"), timeout=5000
    )
    qtbot.waitUntil(lambda: not desk.bridge.busy)
    assert working(desk, first)  # the other conversation's turn goes on
    model.gate.set()
    qtbot.waitUntil(lambda: not working(desk, first), timeout=10000)
    assert said_in(desk, first)[-2:] == ["slow a", "re: slow a"]
    assert "re: slow b" not in said_in(desk, other)


def test_quitting_during_two_conversations_turns_ends_both_cleanly(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    model = gated()
    with running_desktop(qtbot, model) as desk:
        first, other = leave_running(qtbot, desk, "slow a")
        type_and_send(qtbot, desk.window.input, "slow b")
        # Both turns wait for their model, their messages written.
        qtbot.waitUntil(lambda: asked(model, "slow a") and asked(model, "slow b"))
    assert desk.done.is_set()  # quit returned: both turns were cancelled
    with sqlite3.connect(default_paths().db) as db:
        assert db.execute("SELECT count(*) FROM turn_leases").fetchone() == (0,)
        for conversation, message in ((first, "slow a"), (other, "slow b")):
            rows = db.execute(
                "SELECT kind FROM events WHERE conversation_id = ? ORDER BY seq", (conversation,)
            ).fetchall()
            assert rows and rows[-1] == ("message",), (conversation, message)
    model.gate.set()


def test_a_terminal_asks_in_another_conversation_while_the_apps_turn_runs(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    fake_gemini.set_fallback(lambda _r: TextReply("from the terminal"))
    model = gated()
    with running_desktop(qtbot, model) as desk:
        ask(qtbot, desk, "hello a")
        first = desk.runtime.agent.conversation_id
        type_and_send(qtbot, desk.window.input, "slow a")
        qtbot.waitUntil(lambda: working(desk, first))
        finish(koroku("conversations", "new", "Terminal talk"))
        qtbot.waitUntil(lambda: "Terminal talk" in listed(desk), timeout=10000)
        out = finish(koroku("ask", "-c", "Terminal talk", "are you there?"))
        assert "from the terminal" in out
        assert working(desk, first)  # the app's turn was never in the terminal's way
        model.gate.set()
        qtbot.waitUntil(lambda: "re: slow a" in texts(desk.window.model, "model"), timeout=10000)
        book = desk.runtime.conversations
        assert book is not None
        terminal = book.find("Terminal talk")
        assert said_in(desk, terminal.id) == ["are you there?", "from the terminal"]
        assert "from the terminal" not in said_in(desk, first)

        # Shown once, then left: its agent is kept with its live context; what a terminal
        # says there meanwhile is in the window once when it is shown again, and in that
        # live context.
        assert run(qtbot, desk.conversations.switch(terminal.id)) is True
        assert run(qtbot, desk.conversations.switch(first)) is True
        finish(koroku("ask", "-c", "Terminal talk", "still there?"))
        assert run(qtbot, desk.conversations.switch(terminal.id)) is True
        window = desk.window
        assert texts(window.model, "user") == ["are you there?", "still there?"]
        assert texts(window.model, "model") == ["from the terminal"] * 2
        live = [plain(visible_text(m.event.parts)) for m in desk.runtime.agent.view.messages]
        assert live[-2:] == ["still there?", "from the terminal"]


def test_a_quick_ask_answers_in_the_popup_when_the_window_moved_to_another_conversation(
    gated_desk: tuple[Desktop, Gated], qtbot: QtBot
) -> None:
    desk, model = gated_desk
    quick_ask_into_the_chat(desk)  # (its own conversation, "Quick asks", is the default)
    ask(qtbot, desk, "hello a")
    first = desk.runtime.agent.conversation_id
    desk.show_quick_ask()
    popup = desk.popup
    qtbot.waitExposed(popup)
    type_and_send(qtbot, popup.input, "a slow quick question")
    qtbot.waitUntil(lambda: asked(model, "a slow quick question"), timeout=5000)
    assert run(qtbot, desk.conversations.start_new()) is not None
    model.gate.set()
    qtbot.waitUntil(lambda: "re: a slow quick question" in popup.answer_text(), timeout=10000)
    qtbot.waitUntil(lambda: not working(desk, first))
    assert said_in(desk, first)[-1] == "re: a slow quick question"

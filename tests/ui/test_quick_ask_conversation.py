"""Quick ask asks into a conversation of its own ("Quick asks", made on first use, found
again by its purpose whatever its title) or into the chat window's: a setting, shown and
switched in the popup. The whole app offscreen, a real log, `FakeChatModel` for Gemini."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.conversations import (
    QUICK_ASKS,
    QUICK_ASKS_TITLE,
    UNTITLED,
    Conversation,
)
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import visible_text
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.settings.dialog import SettingsDialog
from tests.fakes.chat_model import FakeChatModel
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import run, running_desktop
from tests.ui.helpers import ask, listed, plain, said_in, texts, type_and_send


def echo() -> FakeChatModel:
    """Every turn answered `re: <its last message>`."""

    def reply(request: ModelRequest) -> str:
        return "re: " + plain(visible_text(request.contents[-1].parts))

    return FakeChatModel(reply)


def ask_in_popup(desk: Desktop, qtbot: QtBot, text: str) -> None:
    popup = desk.popup
    if not popup.isVisible():
        popup.pin_button.setChecked(True)
        desk.show_quick_ask()
        qtbot.waitExposed(popup)
    type_and_send(qtbot, popup.input, text)
    qtbot.waitUntil(lambda: f"re: {text}" in popup.answer_text(), timeout=15000)
    qtbot.waitUntil(lambda: not popup.active, timeout=5000)


def users_in(desk: Desktop, conversation_id: str) -> list[str]:
    return said_in(desk, conversation_id, by=("person",))


def test_by_default_quick_ask_asks_into_its_own_conversation_and_the_window_stays(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    with running_desktop(qtbot, echo()) as desk:
        here = ask(qtbot, desk, "about zebras")  # the chat window's conversation
        assert desk.popup.target.full == f"→ {QUICK_ASKS_TITLE}"

        ask_in_popup(desk, qtbot, "capital of France?")
        book = desk.runtime.conversations
        assert book is not None
        quick = book.quick_asks()
        assert (quick.title, quick.purpose) == (QUICK_ASKS_TITLE, QUICK_ASKS)
        assert desk.popup.exchange_conversation == quick.id
        assert users_in(desk, quick.id) == ["capital of France?"]
        # The chat window did not move, and shows nothing of the quick ask.
        assert desk.runtime.agent.conversation_id == here
        assert texts(desk.window.model, "user") == ["about zebras"]
        qtbot.waitUntil(lambda: QUICK_ASKS_TITLE in listed(desk), timeout=5000)

        # Renamed, it is still quick ask's: the next question goes there, no second one.
        book.rename(quick.id, "Little questions")
        ask_in_popup(desk, qtbot, "and of Spain?")
        assert users_in(desk, quick.id) == ["capital of France?", "and of Spain?"]
        made = [c for c in book.all().values() if c.purpose == QUICK_ASKS]
        assert [c.id for c in made] == [quick.id]
        # The quick turn saw only its own conversation.
        last = [plain(visible_text(c.parts)) for c in echo_requests(desk)[-1].contents]
        assert "about zebras" not in " ".join(last)

        # Open in chat: the window moves to Quick asks and shows the exchange.
        desk.popup.open_button.click()
        qtbot.waitUntil(lambda: desk.runtime.agent.conversation_id == quick.id, timeout=5000)
        qtbot.waitUntil(
            lambda: texts(desk.window.model, "user") == ["capital of France?", "and of Spain?"],
            timeout=5000,
        )
        # While the window shows Quick asks, a quick ask goes through the window's agent.
        ask_in_popup(desk, qtbot, "and of Italy?")
        qtbot.waitUntil(lambda: "and of Italy?" in texts(desk.window.model, "user"))
        assert users_in(desk, quick.id)[-1] == "and of Italy?"

        # Back in the first conversation, quick ask's own agent goes on in Quick asks and
        # sees what the window's agent wrote there meanwhile.
        assert run(qtbot, desk.conversations.switch(here)) is True
        ask_in_popup(desk, qtbot, "and of Portugal?")
        sent = [plain(visible_text(c.parts)) for c in echo_requests(desk)[-1].contents]
        assert "and of Italy?" in sent and "and of Portugal?" in sent
        assert desk.runtime.agent.conversation_id == here
        assert users_in(desk, quick.id)[-1] == "and of Portugal?"


def echo_requests(desk: Desktop) -> list[ModelRequest]:
    model = desk.runtime.agent.model
    assert isinstance(model, FakeChatModel)
    return model.requests


def test_switched_in_the_popup_it_asks_into_the_chat_window_and_the_setting_keeps_it(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    with running_desktop(qtbot, echo()) as desk:
        here = ask(qtbot, desk, "about zebras")
        qtbot.waitUntil(lambda: listed(desk) == [UNTITLED], timeout=5000)
        title = desk.window.header.title.full
        assert title == UNTITLED
        target = desk.popup.target
        target.chat.trigger()  # the popup's menu: into the chat window's conversation
        assert desk.runtime.settings_store.effective.quick_ask_into == "current"
        assert target.full == f"→ {title}"

        ask_in_popup(desk, qtbot, "how do they sleep?")
        qtbot.waitUntil(
            lambda: texts(desk.window.model, "user") == ["about zebras", "how do they sleep?"],
            timeout=5000,
        )
        assert users_in(desk, here) == ["about zebras", "how do they sleep?"]
        book = desk.runtime.conversations
        assert book is not None
        assert not [c for c in book.all().values() if c.purpose == QUICK_ASKS]  # none made

        # The Settings dialog shows the setting and changes it back.
        dialog = desk.show_settings()
        assert isinstance(dialog, SettingsDialog)
        assert dialog.quick_into.currentData() == "current"
        dialog.quick_into.setCurrentIndex(0)
        dialog.save_button.click()
        qtbot.waitUntil(lambda: target.full == f"→ {QUICK_ASKS_TITLE}", timeout=5000)
        assert desk.quick.router.target == "quick_asks"
        ask_in_popup(desk, qtbot, "a quick one")
        assert texts(desk.window.model, "user") == ["about zebras", "how do they sleep?"]
        assert users_in(desk, book.quick_asks().id) == ["a quick one"]


def test_a_database_that_cannot_be_written_loses_no_question(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with running_desktop(qtbot, echo()) as desk:
        book = desk.runtime.conversations
        assert book is not None

        def locked() -> Conversation:
            raise sqlite3.OperationalError("database is locked")

        monkeypatch.setattr(book, "quick_asks", locked)
        popup = desk.popup
        popup.pin_button.setChecked(True)
        desk.show_quick_ask()
        qtbot.waitExposed(popup)
        popup.tray.add_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32, "shot.png")
        type_and_send(qtbot, popup.input, "is this kept?")
        qtbot.waitUntil(lambda: "Not asked" in popup.answer_text(), timeout=5000)
        assert "database is locked" in popup.answer_text()
        assert "is this kept?" in popup.answer_text()
        assert popup.input.toPlainText() == "is this kept?"
        assert [p.name for p in popup.tray.pending] == ["shot.png"]
        assert not desk.bridge.busy and users_in(desk, desk.runtime.agent.conversation_id) == []
        monkeypatch.undo()
        popup.tray.take()
        type_and_send(qtbot, popup.input, "now?")
        qtbot.waitUntil(lambda: "re: now?" in popup.answer_text(), timeout=15000)
        # Two questions asked at once: both go, in the order asked; the popup follows the
        # second.
        popup.ask("first of two")
        popup.ask("second of two")
        qtbot.waitUntil(lambda: "re: second of two" in popup.answer_text(), timeout=15000)
        assert "re: first of two" not in popup.answer_text()
        qtbot.waitUntil(lambda: not desk.quick.router.own or not desk.quick.router.own.busy)
        assert users_in(desk, book.quick_asks().id)[-2:] == ["first of two", "second of two"]

"""Helpers for the UI tests: typing into an input, reading what the view shows, asking and
reading back what a conversation holds, and a real `koroku` process beside the app."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.titles import TITLE_INSTRUCTION
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import visible_text
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.conversation_view import ConversationView
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.quick_ask.popup import QuickAskPopup
from koroku_desktop.ui.widgets.chat_input import ChatInput
from tests.fakes.chat_model import FakeChatModel, FakeReply
from tests.support.processes import ROOT, popen_koroku
from tests.ui.conftest import run


def type_and_send(qtbot: QtBot, box: ChatInput, text: str) -> None:
    """Type `text` and press Enter."""
    box.setFocus()
    box.setPlainText(text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def rows(model: MessageModel, kind: str | None = None) -> list[ChatItem]:
    """The model's items, optionally of one kind."""
    return [i for i in model.items() if kind is None or i.kind == kind]


def texts(model: MessageModel, kind: str) -> list[str]:
    """The texts of the model's items of one kind."""
    return [i.text for i in rows(model, kind)]


def click_row_action(qtbot: QtBot, view: ConversationView, item: ChatItem, action: str) -> None:
    """Click the painted target of `action` (`retry`, `toggle`, `copy:`…) on `item`'s row."""
    model = view.model()
    assert isinstance(model, MessageModel)
    row = model.row_of(item)
    assert row >= 0, "the row is not in the view"
    view.scrollTo(model.index(row))
    view.viewport().repaint()
    hits = view.delegate._hits.get(row, [])
    rect = next((r for r, a in hits if a == action or a.startswith(action)), None)
    assert rect is not None, f"no {action!r} target on row {row}: {[a for _, a in hits]}"
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def quick_ask_into_the_chat(desktop: Desktop) -> None:
    """Set quick ask to ask into the chat window's conversation (the setting; the default
    is its own conversation, "Quick asks")."""
    desktop.runtime.settings_store.update({"quick_ask_into": "current"})
    assert desktop.quick.router.target == "current"


def shown_popup(desktop: Desktop, qtbot: QtBot) -> QuickAskPopup:
    """The quick-ask popup, shown (as its hotkey shows it) and exposed."""
    desktop.show_quick_ask()
    qtbot.waitExposed(desktop.popup)
    return desktop.popup


def koroku(*args: str) -> subprocess.Popen[str]:
    """A real `koroku` process on this test's data dir (the environment the app uses)."""
    return popen_koroku(args, dict(os.environ, PYTHONPATH=str(ROOT)))


def finish(proc: subprocess.Popen[str]) -> str:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out


def plain(text: str) -> str:
    """A message without the time note Koroku puts before it."""
    return re.sub(r"^\[Koroku: [^\]]*\]", "", text)


def titled_replies(gate: asyncio.Event | None = None) -> FakeChatModel:
    """Turns answered `re: <message>`; a title request answered `About <first message>`.
    With `gate`, a message containing `slow` waits for it."""

    async def reply(request: ModelRequest) -> FakeReply:
        last = plain(visible_text(request.contents[-1].parts))
        if request.system_instruction == TITLE_INSTRUCTION:
            question = plain(last.split("\n\n")[0].removeprefix("User: "))
            return f"About {question}"
        if gate is not None and "slow" in last:
            await gate.wait()
        return f"re: {last}"

    return FakeChatModel(reply)


def listed(desk: Desktop) -> list[str]:
    return desk.window.sidebar.visible_titles()


def ask(qtbot: QtBot, desk: Desktop, text: str) -> str:
    """Send `text` in the chat window and wait for the answer; the conversation asked in."""
    if desk.welcome is not None:
        desk.welcome.ok_button.click()
        desk.welcome = None
    type_and_send(qtbot, desk.window.input, text)
    qtbot.waitUntil(lambda: f"re: {text}" in texts(desk.window.model, "model"), timeout=15000)
    qtbot.waitUntil(lambda: not desk.bridge.busy)
    return desk.runtime.agent.conversation_id


def ask_in_new(qtbot: QtBot, desk: Desktop, text: str) -> str:
    """Start a conversation and `ask` in it; its id."""
    run(qtbot, desk.conversations.start_new())
    return ask(qtbot, desk, text)


def said_in(
    desk: Desktop, conversation_id: str, by: tuple[str, ...] = ("person", "model")
) -> list[str]:
    """The messages of a conversation in the log (the person's and the model's, or only
    those `by` names), in order."""
    return [
        plain(visible_text(e.event.parts))
        for e in desk.runtime.log.entries(conversation_id)
        if isinstance(e.event, MessageEvent) and e.event.origin in by
    ]

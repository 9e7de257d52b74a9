"""Helpers for the UI tests: typing into an input, reading what the view shows."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.conversation_view import ConversationView
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.widgets.chat_input import ChatInput


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

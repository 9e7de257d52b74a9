"""Helpers for the UI tests: typing into an input, reading what the view shows."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

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

"""ConversationFilter: the viewer's choice of conversation — All conversations, or one by
title (deleted ones included and marked, with a Restore button while one is chosen).

The registry is read off the event loop through the runtime's `ConversationBook` (blocking;
it keeps the `conversation` events it has read, so a refresh reads only new ones). A restore
appends the `restored` conversation event through the book; the chat sidebar reads the log
again (`restored` is emitted for the app to tell it).
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QSizePolicy, QWidget

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.domain.conversations import Conversation, by_recency
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

ALL = "All conversations"


def entry_text(conversation: Conversation) -> str:
    """How the combo names a conversation: its title, where it comes from, its state."""
    marks = []
    if conversation.origin != "koroku":
        marks.append(f"from {conversation.origin_name}")
    if conversation.deleted:
        marks.append("deleted")
    elif conversation.archived:
        marks.append("archived")
    return f"{conversation.title} ({', '.join(marks)})" if marks else conversation.title


class ConversationFilter(QWidget):
    """A combo of the conversations and a Restore button for a deleted one."""

    changed = Signal(object)  # str | None: the conversation chosen (None: all of them)
    loaded = Signal(dict)  # dict[str, Conversation]: the registry as just read
    restored = Signal(str)  # the id of a conversation brought back
    status = Signal(str)  # a line for the dialog's status bar

    def __init__(self, book: ConversationBook, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.book = book
        self.conversations: dict[str, Conversation] = {}
        self._tasks = TaskSet()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.combo = QComboBox()
        self.combo.setToolTip("Which conversation the timeline shows")
        self.combo.setAccessibleName("Conversation")
        self.combo.setObjectName("ConversationFilter")
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(8)
        self.combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.combo.setMaximumWidth(420)
        self.combo.addItem(ALL, None)
        self.combo.currentIndexChanged.connect(self._chosen)
        row.addWidget(self.combo, 1)
        self.restore_button = QPushButton("Restore")
        self.restore_button.setToolTip(
            "Bring this deleted conversation back: it is listed in the chat again"
        )
        self.restore_button.clicked.connect(self.restore)
        self.restore_button.setVisible(False)
        row.addWidget(self.restore_button)
        row.addStretch(0)

    def current(self) -> str | None:
        """The id of the conversation chosen (None: all conversations)."""
        data = self.combo.currentData()
        return data if isinstance(data, str) else None

    def select(self, conversation_id: str | None, *, quiet: bool = False) -> None:
        """Choose a conversation (None: all); `quiet` does not emit `changed`."""
        index = max(0, self.combo.findData(conversation_id)) if conversation_id else 0
        self.combo.blockSignals(quiet)
        self.combo.setCurrentIndex(index)
        self.combo.blockSignals(False)
        self._show_restore()

    def load(self) -> asyncio.Future[dict[str, Conversation]]:
        """Read the registry off the event loop and list it (the choice is kept)."""
        return self._tasks.start(self._load())

    async def _load(self) -> dict[str, Conversation]:
        try:
            found = await asyncio.to_thread(self.book.all, counts=False)
        except Exception as exc:  # shown, never fatal: the timeline still shows all
            log.warning("reading the conversations failed", exc_info=True)
            self.status.emit(f"Could not read the conversations: {exc}")
            return self.conversations
        self.list_conversations(found)
        return found

    def list_conversations(self, found: dict[str, Conversation]) -> None:
        """List `found` (most recently active first) after All conversations."""
        self.conversations = found
        chosen = self.current()
        self.combo.blockSignals(True)
        self.combo.clear()
        self.combo.addItem(ALL, None)
        for conversation in by_recency(found.values()):
            self.combo.addItem(entry_text(conversation), conversation.id)
            tip = f"{conversation.label} · {conversation.origin_name}"
            self.combo.setItemData(self.combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        index = self.combo.findData(chosen) if chosen else 0
        self.combo.setCurrentIndex(max(0, index))
        self.combo.blockSignals(False)
        self._show_restore()
        self.loaded.emit(found)
        if chosen and index < 0:  # it went away (cannot happen in an append-only log)
            self.changed.emit(None)

    def _chosen(self, _index: int) -> None:
        self._show_restore()
        self.changed.emit(self.current())

    def _show_restore(self) -> None:
        chosen = self.conversations.get(self.current() or "")
        self.restore_button.setVisible(chosen is not None and chosen.deleted)

    def restore(self) -> asyncio.Future[Conversation | None]:
        """Restore the deleted conversation chosen (off the loop); resolves to it."""
        return self._tasks.start(self._restore(self.current()))

    async def _restore(self, conversation_id: str | None) -> Conversation | None:
        if conversation_id is None:
            return None
        self.restore_button.setEnabled(False)
        try:
            back = await asyncio.to_thread(self.book.restore, conversation_id)
        except Exception as exc:  # a database error: one line, never a crash
            log.warning("restoring a conversation failed", exc_info=True)
            self.status.emit(f"Could not restore the conversation: {exc}")
            return None
        finally:
            self.restore_button.setEnabled(True)
        self.status.emit(f"Restored “{back.title}”: it is listed in the chat again.")
        self.restored.emit(back.id)
        await self._load()
        return back

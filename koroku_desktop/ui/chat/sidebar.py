"""ConversationSidebar: the chat window's list of conversations, most recently active first
(pinned ones on top), with a search over titles, a New button and a menu per conversation
(rename, pin, archive, delete). It shows what it is given (`show_conversations`) and reports
what the person wants through its signals; `ConversationSwitcher` does the rest.

The lines are a list view over `ConversationLines`, plain Python rows, not a QListWidget's
items: refilling one is a single model reset, with no C++ item made or deleted per line
(a QListWidget's `clear()` deletes every item through PySide's ownership bookkeeping,
releasing and retaking the GIL around each one; a test-suite worker once crashed inside
it), and nothing can hold on to an item that a refill deleted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.domain.conversations import Conversation
from koroku_desktop.ui.chat.origin_badge import (
    ORIGIN_ROLE,
    OriginBadgeDelegate,
    origin_badge,
    origin_tooltip,
)
from koroku_desktop.ui.widgets.controls import search_field

WIDTH = 240
"""The sidebar's width beside the conversation."""
PIN = "★ "
RUNNING = "  ● running"
NEEDS_YOU = "  ● needs you"
AnyIndex = QModelIndex | QPersistentModelIndex


def ordered(conversations: Sequence[Conversation], pinned: set[str]) -> list[Conversation]:
    """Pinned first, then the rest; each group in the order given (most recent first);
    archived ones last."""
    return sorted(conversations, key=lambda c: (c.archived, c.id not in pinned))  # sorted is stable


def shown_title(conversation: Conversation, pinned: set[str]) -> str:
    """The line a conversation gets in the list and the drop-down."""
    title = conversation.title + (" (archived)" if conversation.archived else "")
    return (PIN if conversation.id in pinned else "") + title


class ConversationLines(QAbstractListModel):
    """The sidebar's lines: each conversation listed (after the search) and its line (title,
    pin, activity mark); its id, origin badge and tooltip come from the conversation."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[Conversation, str]] = []

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        """One row a conversation listed."""
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The line (DisplayRole), the id (UserRole), the badge (ORIGIN_ROLE), the tooltip."""
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        conversation, line = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return line
        if role == Qt.ItemDataRole.UserRole:
            return conversation.id
        if role == ORIGIN_ROLE:
            return origin_badge(conversation)
        if role == Qt.ItemDataRole.ToolTipRole:
            return origin_tooltip(conversation)
        return None

    def show_rows(self, rows: list[tuple[Conversation, str]]) -> None:
        """List these instead (one reset)."""
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def set_line(self, row: int, line: str) -> None:
        """Change one row's line (its mark)."""
        self.rows[row] = (self.rows[row][0], line)
        index = self.index(row)
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole])


class ConversationSidebar(QWidget):
    """The list of conversations; reports choices as signals (ids)."""

    chosen = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str, str)  # id, new title
    pin_toggled = Signal(str)
    archive_requested = Signal(str)
    delete_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setFixedWidth(WIDTH)
        self.conversations: list[Conversation] = []
        self.pinned: set[str] = set()
        self.current_id = ""
        self.activity: tuple[set[str], set[str]] = (set(), set())
        """The conversations with a turn running, and those waiting for the person."""
        self._rows: dict[str, int] = {}
        """The row of each conversation listed (after the search)."""
        col = QVBoxLayout(self)
        col.setContentsMargins(10, 10, 8, 10)
        col.setSpacing(8)
        top = QHBoxLayout()
        title = QLabel("<b>Conversations</b>")
        top.addWidget(title, 1)
        self.new_button = QPushButton("New")
        self.new_button.setToolTip("New conversation (Ctrl+N)")
        self.new_button.clicked.connect(self.new_requested)
        top.addWidget(self.new_button)
        col.addLayout(top)
        self.search = search_field(QLineEdit(), "ConversationSearch", "Search titles", self._refill)
        col.addWidget(self.search)
        self.list = QListView()
        self.lines = ConversationLines(self.list)  # the view goes first, then its model
        self.list.setObjectName("ConversationList")
        self.list.setModel(self.lines)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setUniformItemSizes(True)  # one line each: 1,000 lay out at once
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu_at)
        self.list.setItemDelegate(OriginBadgeDelegate(self.list))
        self.list.clicked.connect(self._clicked)
        self.list.activated.connect(self._clicked)
        col.addWidget(self.list, 1)

    # -- showing -----------------------------------------------------------------------

    def show_conversations(
        self, conversations: Sequence[Conversation], current_id: str, pinned: set[str]
    ) -> None:
        """Show these conversations (most recent first), `current_id` selected (the same
        list again, e.g. after a switch, only moves the selection). A new current one is
        scrolled to; otherwise the list stays scrolled where the person left it: a write
        anywhere in the log (another process's included) reorders the list under them, and
        must not throw them back to the conversation they are in."""
        same = list(conversations) == self.conversations and set(pinned) == self.pinned
        moved = current_id != self.current_id
        self.conversations = list(conversations)
        self.current_id = current_id
        self.pinned = set(pinned)
        if same:
            self._select()
        else:
            self._refill(keep_scroll=not moved)

    def show_activity(self, running: set[str], needs_you: set[str]) -> None:
        """Mark conversations whose turn runs, or waits for an approval (their lines only)."""
        was_running, was_needing = self.activity
        self.activity = (set(running), set(needs_you))
        changed = (was_running ^ self.activity[0]) | (was_needing ^ self.activity[1])
        for conversation_id in changed:
            row = self._rows.get(conversation_id)
            if row is not None:
                self.lines.set_line(row, self._line(self.lines.rows[row][0]))

    def activity_mark(self, conversation_id: str) -> str:
        """What a conversation's line ends with while its turn runs or needs the person."""
        running, needs_you = self.activity
        if conversation_id in needs_you:
            return NEEDS_YOU
        return RUNNING if conversation_id in running else ""

    def _line(self, conversation: Conversation) -> str:
        return shown_title(conversation, self.pinned) + self.activity_mark(conversation.id)

    def visible_titles(self) -> list[str]:
        """The titles listed now, top to bottom (after the search)."""
        return [line for _conversation, line in self.lines.rows]

    def matching(self) -> list[Conversation]:
        """The conversations the search keeps, in the order they are listed."""
        words = self.search.text().casefold().split()
        kept = [c for c in self.conversations if all(w in c.title.casefold() for w in words)]
        return ordered(kept, self.pinned)

    def _refill(self, *, keep_scroll: bool = False) -> None:
        """List what the search keeps, the current one selected (and scrolled to, unless
        `keep_scroll`: the list stays where it was scrolled)."""
        bar = self.list.verticalScrollBar()
        scrolled = bar.value()
        rows = [(c, self._line(c)) for c in self.matching()]
        self._rows = {conversation.id: row for row, (conversation, _line) in enumerate(rows)}
        self.lines.show_rows(rows)
        self._select()
        if keep_scroll:
            bar.setValue(scrolled)  # (selecting scrolled to the current one)

    def _select(self) -> None:
        """Select the current conversation's line (none when the search hides it)."""
        row = self._rows.get(self.current_id)
        if row is None:
            self.list.clearSelection()
        else:
            self.list.selectionModel().setCurrentIndex(
                self.lines.index(row), QItemSelectionModel.SelectionFlag.ClearAndSelect
            )

    # -- intents -----------------------------------------------------------------------

    def _clicked(self, index: QModelIndex) -> None:
        cid = str(index.data(Qt.ItemDataRole.UserRole))
        if index.isValid() and cid != self.current_id:
            self.chosen.emit(cid)

    def _menu_at(self, pos: QPoint) -> None:
        index = self.list.indexAt(pos)
        if index.isValid():
            self.menu_for(str(index.data(Qt.ItemDataRole.UserRole))).popup(
                self.list.viewport().mapToGlobal(pos)
            )

    def menu_for(self, conversation_id: str) -> QMenu:
        """The menu of one conversation: Rename…, Pin/Unpin, Archive, Delete."""
        menu = QMenu(self)
        rename = QAction("Rename…", menu)
        rename.triggered.connect(lambda: self.ask_rename(conversation_id))
        pin = QAction("Unpin" if conversation_id in self.pinned else "Pin", menu)
        pin.triggered.connect(lambda: self.pin_toggled.emit(conversation_id))
        archive = QAction("Archive", menu)
        archive.triggered.connect(lambda: self.archive_requested.emit(conversation_id))
        delete = QAction("Delete", menu)
        delete.setToolTip("Hidden everywhere; kept in the log and restorable from the viewer")
        delete.triggered.connect(lambda: self.delete_requested.emit(conversation_id))
        for action in (rename, pin, archive, delete):
            menu.addAction(action)
        return menu

    def _renamed(self, conversation_id: str, text: str) -> None:
        if text.strip():
            self.rename_requested.emit(conversation_id, text)

    def ask_rename(self, conversation_id: str) -> QInputDialog:
        """Ask for a new title (a small dialog); `rename_requested` when one is given."""
        found = next((c for c in self.conversations if c.id == conversation_id), None)
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Rename conversation")
        dialog.setLabelText("Title:")
        dialog.setTextValue(found.title if found else "")
        dialog.textValueSelected.connect(lambda text: self._renamed(conversation_id, text))
        # Closed, it hands the keyboard back to the window (without a window manager to do
        # it, typed keys went nowhere).
        dialog.finished.connect(lambda _result: self.window().activateWindow())
        dialog.open()
        return dialog

"""MessageModel: the conversation as a QAbstractListModel over chat items (no widget per row)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from koroku_desktop.domain.events import LogEntry, MessageEvent, StoredEvent
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart
from koroku_desktop.render.fold import tool_result
from koroku_desktop.ui.chat.items import ChatItem, ToolCardIndex, build_items, items_for_entry
from koroku_desktop.ui.chat.tool_runs import regroup

ITEM_ROLE = Qt.ItemDataRole.UserRole + 1

AnyIndex = QModelIndex | QPersistentModelIndex


class MessageModel(QAbstractListModel):
    """Rows of the conversation; updated from the bridge's signals as events arrive."""

    show_thoughts_changed = Signal(bool)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._items: list[ChatItem] = []
        self._cards = ToolCardIndex()
        self._streaming: ChatItem | None = None
        self._status: ChatItem | None = None
        self.show_thoughts = False
        self.oldest_seq: int | None = None
        """The seq of the oldest loaded event (for loading older pages)."""

    # -- Qt model API ------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        """Number of rows."""
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The ChatItem for ITEM_ROLE, its text for DisplayRole."""
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        item = self._items[index.row()]
        if role == ITEM_ROLE:
            return item
        if role == Qt.ItemDataRole.DisplayRole:
            return item.text
        if role == Qt.ItemDataRole.ToolTipRole and item.kind == "remembered":
            return item.args.get("remembered")  # the passages in full
        return None

    # -- access ------------------------------------------------------------------------

    def item(self, row: int) -> ChatItem:
        """The item at `row`."""
        return self._items[row]

    def items(self) -> list[ChatItem]:
        """All items (a copy of the list)."""
        return list(self._items)

    def row_of(self, item: ChatItem) -> int:
        """The row of an item, or -1."""
        for row in range(len(self._items) - 1, -1, -1):
            if self._items[row] is item:
                return row
        return -1

    def row_of_seq(self, seq: int) -> int:
        """The first row built from the event `seq` (or the next one after it), or -1."""
        for row, item in enumerate(self._items):
            if item.seq is not None and item.seq >= seq:
                return row
        return -1

    def _changed(self, item: ChatItem) -> None:
        row = self.row_of(item)
        if row >= 0:
            idx = self.index(row)
            self.dataChanged.emit(idx, idx, [ITEM_ROLE])
            if item.kind == "tool":
                self._regroup(row)

    def _regroup(self, start: int) -> None:
        """Re-mark the tool runs from `start` on; repaint the cards whose marks changed."""
        for item in regroup(self._items, start):
            row = self.row_of(item)
            idx = self.index(row)
            self.dataChanged.emit(idx, idx, [ITEM_ROLE])

    def toggle_run(self, row: int) -> None:
        """Open or close the run of tool cards that starts at `row`."""
        head = self._items[row]
        head.run_open = not head.run_open
        head.touch()
        self._regroup(row)
        self.layoutChanged.emit()

    # -- whole loads -------------------------------------------------------------------

    def set_entries(self, entries: list[LogEntry]) -> None:
        """Replace everything with rows for `entries` (seq order)."""
        self._cards.clear()
        self._cards.chips.clear()
        self._cards.dismissed.clear()
        self.beginResetModel()
        self._items = build_items(entries, self._cards)
        regroup(self._items)
        self._streaming = None
        self._status = None
        self.endResetModel()
        self.oldest_seq = entries[0].seq if entries else None

    def prepend_entries(self, entries: list[LogEntry]) -> int:
        """Insert rows for older entries at the top; return how many rows were added."""
        if not entries:
            return 0
        index = ToolCardIndex()
        index.dismissed = self._cards.dismissed  # dismissals seen in the newer, loaded part
        items = build_items(entries, index)
        # Calls whose responses are in the already-loaded part stay as they were loaded.
        self.oldest_seq = entries[0].seq
        if not items:
            return 0
        self.beginInsertRows(QModelIndex(), 0, len(items) - 1)
        self._items[0:0] = items
        self.endInsertRows()
        self._regroup(0)
        return len(items)

    def _append(self, items: list[ChatItem]) -> None:
        if not items:
            return
        first = len(self._items) - (1 if self._status is not None else 0)  # status stays last
        self.beginInsertRows(QModelIndex(), first, first + len(items) - 1)
        self._items[first:first] = items
        self.endInsertRows()
        if any(i.kind == "tool" for i in items):
            self._regroup(first)

    def _remove(self, item: ChatItem) -> None:
        row = self.row_of(item)
        if row >= 0:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._items[row]
            self.endRemoveRows()

    # -- live updates ------------------------------------------------------------------

    def append_event(self, stored: StoredEvent) -> list[ChatItem]:
        """Add the rows of a newly appended event; a model reply replaces the streamed row."""
        event = stored.event
        if (
            self._streaming is not None
            and isinstance(event, MessageEvent)
            and event.role == "model"
        ):
            self._remove(self._streaming)
            self._streaming = None
        closed: list[ChatItem] = []
        items = items_for_entry(stored, self._cards, closed)
        for card in closed:
            self._changed(card)
        self._append(items)
        return items

    def append_delta(self, piece: str) -> None:
        """Stream visible text into the current answer row (created on the first piece)."""
        if self._streaming is None:
            self._streaming = ChatItem(kind="model", text=piece, streaming=True)
            self._append([self._streaming])
            return
        self._streaming.text += piece
        self._streaming.touch()
        self._changed(self._streaming)

    def end_stream(self) -> None:
        """Drop a streamed row no event replaced (the request failed mid-answer)."""
        if self._streaming is not None:
            self._remove(self._streaming)
            self._streaming = None

    def tool_started(self, call: FunctionCallPart) -> None:
        """Show a card as running."""
        item = self._cards.find_open(call)
        if item is not None:
            item.status = "running"
            item.touch()
            self._changed(item)

    def tool_finished(self, call: FunctionCallPart, part: FunctionResponsePart) -> None:
        """Show a card's result (✓ or ✗, by the same rule as a reload) before the event lands."""
        item = self._cards.resolve(tool_result(part))
        if item is not None:
            self._changed(item)

    def set_status(self, text: str | None) -> None:
        """Show what the running turn does now in the last row (None: remove it)."""
        if text is None:
            if self._status is not None:
                self._remove(self._status)
                self._status = None
            return
        if self._status is None:
            self._append([ChatItem(kind="status", text=text)])
            self._status = self._items[-1]
            return
        if self._status.text != text:
            self._status.text = text
            self._status.touch()
            self._changed(self._status)

    @property
    def status(self) -> str | None:
        """The live status line shown, if any."""
        return self._status.text if self._status is not None else None

    def add_turn_notice(self, kind: str, text: str) -> ChatItem:
        """Say how a turn ended (stopped, failed, budget, cut off) under its last row."""
        item = ChatItem(kind="turn_notice", tool=kind, text=text)
        self._append([item])
        return item

    def drop_turn_notices(self, kind: str) -> None:
        """Remove the notices of one kind (a failure once its retry starts)."""
        for item in [i for i in self._items if i.kind == "turn_notice" and i.tool == kind]:
            self._remove(item)

    def toggle_expanded(self, row: int) -> None:
        """Expand or collapse a tool card, compaction marker or thought."""
        item = self._items[row]
        item.expanded = not item.expanded
        item.touch()
        self._changed(item)

    def set_show_thoughts(self, show: bool) -> None:
        """Show or hide thought rows (hidden rows are zero-height)."""
        self.show_thoughts = show
        self.layoutChanged.emit()
        self.show_thoughts_changed.emit(show)

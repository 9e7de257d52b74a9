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

from koroku_desktop.domain.events import (
    ClearedEvent,
    LogEntry,
    MessageEvent,
    StoredEvent,
    SupersededEvent,
)
from koroku_desktop.domain.liveness import Liveness
from koroku_desktop.ui.chat.items import ChatItem, ToolCardIndex, build_items, items_for_entry
from koroku_desktop.ui.chat.running_rows import RunningTurnRows
from koroku_desktop.ui.chat.tool_runs import regroup
from koroku_desktop.ui.chat.turn_versions import TurnVersions, since_last_clear

ITEM_ROLE = Qt.ItemDataRole.UserRole + 1
SHOWN_AT_ONCE = 500
"""Events given rows at once when a conversation opens; older ones as the view scrolls up."""

AnyIndex = QModelIndex | QPersistentModelIndex


class MessageModel(QAbstractListModel, RunningTurnRows):
    """Rows of the conversation; updated from the bridge's signals as events arrive (the
    running turn's own rows: ui/chat/running_rows.py)."""

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
        self._held: list[LogEntry] = []
        """Older entries of the loaded page that have no rows yet (see `set_entries`)."""
        self._rule = Liveness()
        """What the loaded events say of liveness (domain/liveness.py): the chat leaves out
        the turns a regenerate or an edit replaced."""
        self._marked: list[ChatItem] = []
        self.versions = TurnVersions()
        """The answers a regenerate or an edit replaced (‹ 1/2 ›)."""

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
        """Replace everything with rows for `entries` (seq order).

        Only about the newest `SHOWN_AT_ONCE` events get rows now (from a person's turn on,
        so no tool call is cut from its result); older ones are held and get their rows as
        the view scrolls up to them (`prepend_held`), so opening a long conversation costs
        the same as a short one.
        """
        entries, cleared = since_last_clear(entries)
        self._cards.clear()
        self._marked = []
        self._rule = Liveness.of(entries)
        self.versions.load(entries, set(self._rule.replaced))
        kept = self._kept(entries)
        cut = turn_start_before(kept, len(kept) - SHOWN_AT_ONCE)
        self._held = kept[:cut]
        self._cards.chips.clear()
        self._cards.dismissed.clear()
        self.beginResetModel()
        self._items = build_items(kept[cut:], self._cards)
        regroup(self._items)
        self._streaming = None
        self._status = None
        self.versions.label(self._items)
        self.endResetModel()
        # After a clear nothing older is asked for: the chat starts afresh there (the
        # viewer keeps it all).
        self.oldest_seq = None if cleared or not entries else entries[0].seq

    def prepend_entries(self, entries: list[LogEntry]) -> int:
        """Insert rows for older entries at the top; return how many rows were added."""
        if not entries:
            return 0
        entries, cleared = since_last_clear(entries)
        first_seq = None if cleared or not entries else entries[0].seq
        index = ToolCardIndex()
        for entry in entries:
            if isinstance(entry, StoredEvent):
                self._rule.note(entry)
        index.dismissed = self._cards.dismissed  # dismissals seen in the newer, loaded part
        items = build_items(self._kept(entries), index)
        # Calls whose responses are in the already-loaded part stay as they were loaded.
        self.oldest_seq = first_seq
        if not items:
            return 0
        self.beginInsertRows(QModelIndex(), 0, len(items) - 1)
        self._items[0:0] = items
        self.endInsertRows()
        self._regroup(0)
        return len(items)

    @property
    def held(self) -> int:
        """How many older entries are held without rows yet."""
        return len(self._held)

    def prepend_held(self, limit: int = SHOWN_AT_ONCE, down_to_seq: int | None = None) -> int:
        """Give rows to the newest `limit` held entries (or every held one from
        `down_to_seq` on), at the top; how many rows were added."""
        held = self._held
        start = max(0, len(held) - limit)
        if down_to_seq is not None:
            start = min(start, next((i for i, e in enumerate(held) if e.seq >= down_to_seq), 0))
        start = turn_start_before(held, start)
        page, self._held = held[start:], held[:start]
        oldest = self.oldest_seq
        added = self.prepend_entries(page)
        self.oldest_seq = oldest
        return added

    def _kept(self, entries: list[LogEntry]) -> list[LogEntry]:
        if not self._rule.replaced:
            return entries
        return [e for e in entries if not self._rule.in_replaced_turn(e)]

    def supersede(self, turn_id: str, by: str = "") -> None:
        """Leave out the rows of a replaced turn, and how it ended (its turn notices); they
        are kept as an older version of turn `by` (the one replacing it)."""
        if not turn_id:
            return
        self._rule.replaced.setdefault(turn_id, ("regenerate", by))
        rows = [r for r, i in enumerate(self._items) if i.turn_id == turn_id]
        if not rows:
            return
        notices = [
            r for r in range(rows[0], len(self._items)) if self._items[r].kind == "turn_notice"
        ]
        gone = sorted(set(rows) | set(notices))
        self.versions.keep(by, turn_id, [self._items[r] for r in gone])
        for row in reversed(gone):
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._items[row]
            self.endRemoveRows()

    def mark_last_turn(self, turn_id: str | None, *, editing: bool = False) -> None:
        """Offer `edit` on the message of turn `turn_id` and `regenerate` on the answer after
        it (None: on no row, e.g. while a turn runs); `editing` marks the message as being
        edited instead."""
        marked: list[ChatItem] = []
        if turn_id:
            user = next(
                (
                    r
                    for r in range(len(self._items) - 1, -1, -1)
                    if self._items[r].turn_id == turn_id and self._items[r].kind == "user"
                ),
                None,
            )
            if user is not None:
                self._items[user].actions = ("editing",) if editing else ("edit",)
                marked.append(self._items[user])
                answer = next(
                    (i for i in reversed(self._items[user + 1 :]) if i.kind == "model" and i.seq),
                    None,
                )
                if answer is not None and not editing:
                    answer.actions = ("regenerate",)
                    marked.append(answer)
        for item in self._marked:
            if not any(item is m for m in marked):
                item.actions = ()
                self._changed(item)
        for item in marked:
            self._changed(item)
        self._marked = marked

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
        if isinstance(event, SupersededEvent):
            self._rule.note(stored)
            self.supersede(event.superseded_turn_id, by=stored.turn_id)
            return []
        if self._rule.in_replaced_turn(stored):
            return []  # a late event of a replaced turn
        if isinstance(event, ClearedEvent):  # here or in another front end: start afresh
            self.set_entries([stored])
            return []
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
        if stored.turn_id in self.versions.replaced:
            for item in self.versions.label(self._items):
                self._changed(item)
        return items

    def show_version(self, newest: str, step: int) -> None:
        """‹ or › on a replaced turn's answer: show its older (-1) or newer (1) version."""
        chain = self.versions.chain(newest)
        current = self.versions.shown.get(newest, newest)
        at = chain.index(current) if current in chain else len(chain) - 1
        target = chain[max(0, min(len(chain) - 1, at + step))]
        rows = [r for r, i in enumerate(self._items) if i.turn_id == current]
        if target == current or not rows:
            return
        first, last = rows[0], rows[-1]
        self.versions.rows[current] = self._items[first : last + 1]
        self.beginRemoveRows(QModelIndex(), first, last)
        del self._items[first : last + 1]
        self.endRemoveRows()
        incoming = self.versions.rows.get(target, [])
        self.versions.shown[newest] = target
        self.versions.label(incoming)
        if incoming:
            self.beginInsertRows(QModelIndex(), first, first + len(incoming) - 1)
            self._items[first:first] = incoming
            self.endInsertRows()

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


def turn_start_before(entries: list[LogEntry], at: int) -> int:
    """The index of the person's turn that starts at or before `at` (0 when none; `at`
    itself when it is at or past the end), so a page never splits a call from its result."""
    if at <= 0:
        return 0
    if at >= len(entries):
        return len(entries)
    for i in range(at, -1, -1):
        entry = entries[i]
        if isinstance(entry, StoredEvent) and (
            not isinstance(entry.event, MessageEvent) or entry.event.is_user_turn
        ):
            return i
    return 0

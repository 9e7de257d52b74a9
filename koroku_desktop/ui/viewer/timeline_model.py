"""TimelineModel: the event log as a lazy table, newest first, paged by seq off the event loop.

Only the rows the view asks for are read: `fetchMore` reads the next page (keyset on seq) in
a worker thread, so a log of a million events opens as fast as one of a thousand.
"""

from __future__ import annotations

import asyncio
import bisect
import heapq
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor

from koroku_desktop.agent.ports import LogReader
from koroku_desktop.domain.events import (
    UNSYNCED_BASE,
    DamagedEvent,
    LogEntry,
    MessageEvent,
    StoredEvent,
)
from koroku_desktop.domain.kinds import LIVENESS_KINDS
from koroku_desktop.domain.liveness import Liveness
from koroku_desktop.render.text import when
from koroku_desktop.ui.viewer import event_render
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

PAGE = 200
BOUNDARY_LIMIT = 20_000
COLUMNS = ("#", "When", "Kind", "Who", "Context", "Content", "Conversation")
CONVERSATION_COLUMN = 6
SEQ_ROLE = Qt.ItemDataRole.UserRole + 1
NO_RULE = Liveness()

AnyIndex = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class TimelineQuery:
    """What the timeline shows: kinds (None: all) between two exclusive seq bounds, of one
    conversation (None: every conversation)."""

    kinds: tuple[str, ...] | None = None
    after_seq: int | None = None
    before_seq: int | None = None
    conversation: str | None = None


def first_seq_at(reader: LogReader, ts: float, last_seq: int) -> int:
    """The first seq whose time is at or after `ts` (last_seq + 1 if none).

    A binary search over seq with one-row keyset reads, since times grow with seq. Runs in a
    worker thread.
    """
    lo, hi = 1, last_seq + 1
    while lo < hi:
        mid = (lo + hi) // 2
        page = reader.entries(None, after_seq=mid - 1, limit=1)
        if not page or page[0].seq >= hi or page[0].created_at >= ts:
            hi = mid
        else:
            lo = page[0].seq + 1
    return lo


def read_liveness(reader: LogReader, conversation_id: str) -> Liveness:
    """What a conversation's compactions, clears, replaced turns and set-aside messages say
    of liveness, read through the kind index (oldest first)."""
    return Liveness.of(reader.entries(conversation_id, kinds=LIVENESS_KINDS, limit=BOUNDARY_LIMIT))


def entry_order(entry: LogEntry) -> int:
    """An entry's place in the one order pages are read in (a damaged row: its seq's)."""
    return entry.order_key if isinstance(entry, StoredEvent) else UNSYNCED_BASE + entry.seq


def merged_page(
    reader: LogReader,
    conversations: Sequence[str],
    kinds: Sequence[str],
    before: int | None,
    after: int | None,
) -> list[LogEntry]:
    """A page (newest first) of some kinds over every conversation: one read of the
    (conversation, kind, seq) index per conversation, merged, never a scan of the log."""
    pages = [
        reader.entries(
            cid, before_seq=before, after_seq=after, limit=PAGE, newest_first=True, kinds=kinds
        )
        for cid in conversations
    ]
    key = (lambda e: e.seq) if after is not None else entry_order
    merged = heapq.merge(*pages, key=key, reverse=True)
    return [e for _, e in zip(range(PAGE), merged, strict=False)]


def context_status(
    entry: LogEntry, rule: Liveness, summarised: dict[str, int] | None = None
) -> str:
    """`live`, `summarised in #N`, `cleared at #N`, `replaced (regenerated)`, `set aside` or
    `skipped (damaged)`: does the model see it? By the one rule; `summarised` maps message
    ids to the compaction that covered them (`LogReader.summarised_in`)."""
    covered_by = (summarised or {}).get(entry.event_id) if isinstance(entry, StoredEvent) else None
    return rule.standing(entry, covered_by).label()


class TimelineModel(QAbstractTableModel):
    """Log entries, newest first; pages are read lazily in a worker thread."""

    loading_changed = Signal(bool)
    page_loaded = Signal(int)  # rows added
    failed = Signal(str)

    def __init__(self, reader: LogReader, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._reader = reader
        self._rows: list[LogEntry] = []
        self._status: list[str] = []
        self._rules: dict[str, Liveness] = {}
        self.conversation_ids: tuple[str, ...] = ()
        """Every conversation of the log (the registry's, set by the panel): a kind filter
        over all of them reads each one's index instead of scanning the log."""
        self.titles: dict[str, str] = {}
        """Each conversation's title, by id (the Conversation column; set by the panel)."""
        self._query = TimelineQuery()
        self._exhausted = True
        self._loading = False
        self._generation = 0
        self._tasks = TaskSet()
        self._first_page = asyncio.Event()

    # -- queries -----------------------------------------------------------------------

    @property
    def query(self) -> TimelineQuery:
        """The query shown."""
        return self._query

    @property
    def loading(self) -> bool:
        """A page is being read."""
        return self._loading

    @property
    def exhausted(self) -> bool:
        """Every row of the query is loaded."""
        return self._exhausted

    def set_query(self, query: TimelineQuery) -> None:
        """Show another query from its newest row; reads the first page at once."""
        self.beginResetModel()
        self._generation += 1
        self._query = query
        self._rows = []
        self._status = []
        self._exhausted = False
        self._loading = False
        self._first_page.set()  # wakes whoever waited for the old query
        self._first_page = asyncio.Event()
        self.endResetModel()
        self._start_fetch(with_boundaries=True)

    def reload(self) -> None:
        """Read the query again (new events appear at the top)."""
        self.set_query(self._query)

    async def first_page(self) -> None:
        """Wait until the current query's first page is in (or failed)."""
        while True:
            generation, event = self._generation, self._first_page
            await event.wait()
            if generation == self._generation:
                return

    async def jump_to(self, seq: int, context: int = 20) -> int:
        """Show the log around `seq` (a few newer events above it, of every conversation);
        the row of `seq` or -1."""
        newer = await asyncio.to_thread(self._reader.entries, None, after_seq=seq, limit=context)
        top = newer[-1].seq + 1 if newer else seq + 1
        self.set_query(TimelineQuery(before_seq=top))
        await self.first_page()
        return self.row_of_seq(seq)

    # -- paging ------------------------------------------------------------------------

    def canFetchMore(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        """More rows can be read (and no read is running)."""
        return not parent.isValid() and not self._exhausted and not self._loading

    def fetchMore(self, parent: AnyIndex = QModelIndex()) -> None:  # noqa: B008
        """Read the next page in a worker thread."""
        if self.canFetchMore(parent):
            self._start_fetch(with_boundaries=False)

    def _start_fetch(self, *, with_boundaries: bool) -> None:
        self._loading = True
        self.loading_changed.emit(True)
        self._tasks.start(self._fetch(self._generation, with_boundaries))

    def _read(
        self, before: int | None, known: frozenset[str]
    ) -> tuple[list[LogEntry], dict[str, int], dict[str, Liveness]]:
        q = self._query
        if q.conversation is None and q.kinds is not None and self.conversation_ids:
            # Kind filters go through the (conversation, kind, seq) index, one per conversation.
            page = merged_page(self._reader, self.conversation_ids, q.kinds, before, q.after_seq)
        else:
            page = self._reader.entries(
                q.conversation,
                before_seq=before,
                after_seq=q.after_seq,
                limit=PAGE,
                newest_first=True,
                kinds=q.kinds,
            )
        messages = [
            e.event_id
            for e in page
            if isinstance(e, StoredEvent) and isinstance(e.event, MessageEvent)
        ]
        summarised = self._reader.summarised_in(messages) if messages else {}
        # Each conversation's own boundaries say what of it is live (read once per query).
        rules = {
            cid: read_liveness(self._reader, cid)
            for cid in dict.fromkeys(e.conversation_id for e in page)
            if cid not in known
        }
        return page, summarised, rules

    async def _fetch(self, generation: int, with_boundaries: bool) -> None:
        before = self._rows[-1].seq if self._rows else self._query.before_seq
        if with_boundaries:
            self._rules = {}
        known = frozenset(self._rules)
        try:
            page, summarised, rules = await asyncio.to_thread(self._read, before, known)
        except Exception as exc:  # a failing read is shown, never fatal
            log.warning("reading the timeline failed", exc_info=True)
            if generation == self._generation:
                self._loading = False
                self._exhausted = True
                self._first_page.set()
                self.loading_changed.emit(False)
                self.failed.emit(f"Could not read the log: {exc}")
            return
        if generation != self._generation:
            return  # the query changed meanwhile
        self._rules.update(rules)
        self._loading = False
        self._exhausted = len(page) < PAGE
        if page:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(page) - 1)
            self._rows.extend(page)
            self._status.extend(
                context_status(e, self._rules.get(e.conversation_id, NO_RULE), summarised)
                for e in page
            )
            self.endInsertRows()
        self._first_page.set()
        self.loading_changed.emit(False)
        self.page_loaded.emit(len(page))

    # -- reading rows ------------------------------------------------------------------

    def entry_at(self, row: int) -> LogEntry | None:
        """The entry shown in `row`."""
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def status_at(self, row: int) -> str:
        """The Context column of `row`."""
        return self._status[row] if 0 <= row < len(self._status) else ""

    def row_of_seq(self, seq: int) -> int:
        """The row showing `seq`, or -1 if it is not loaded."""
        keys = [-e.seq for e in self._rows]
        i = bisect.bisect_left(keys, -seq)
        return i if i < len(self._rows) and self._rows[i].seq == seq else -1

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        """Rows loaded so far."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        """Seq, time, kind, who, context, content, conversation."""
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column titles."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Text, colours and tooltips of a cell."""
        entry = self.entry_at(index.row())
        if entry is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(entry, index.row(), col)
        if role == SEQ_ROLE:
            return entry.seq
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._color(entry, index.row())
        if role == Qt.ItemDataRole.ToolTipRole:
            if isinstance(entry, DamagedEvent):
                return f"Damaged row: {entry.error}"
            if col == 4 and self.status_at(index.row()) != "live":
                return "The model no longer sees this event; it stays in the log and in search."
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _text(self, entry: LogEntry, row: int, col: int) -> str:
        if col == 0:
            return str(entry.seq)
        if col == 1:
            return when(entry.created_at, "%Y-%m-%d %H:%M")
        if col == 2:
            return event_render.kind_label(entry)
        if col == 3:
            return event_render.role_label(entry)
        if col == 4:
            return self.status_at(row)
        if col == CONVERSATION_COLUMN:
            return self.conversation_title(entry.conversation_id)
        return event_render.summary(entry)

    def conversation_title(self, conversation_id: str) -> str:
        """The title of a conversation (its short id until the registry is read)."""
        return self.titles.get(conversation_id) or conversation_id[:8]

    def _color(self, entry: LogEntry, row: int) -> QColor | None:
        t = theme.current()
        if isinstance(entry, DamagedEvent):
            return t.color("danger")
        if self.status_at(row) != "live":
            return t.color("muted")
        return None

"""CompactionsPanel: every summary, the range of events it covers, its token counts, and the
events it replaced."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.agent.ports import LogReader
from koroku_desktop.domain.events import (
    BOUNDARY_KINDS,
    ClearedEvent,
    CompactionEvent,
    StoredEvent,
)
from koroku_desktop.render.text import when
from koroku_desktop.ui.viewer.event_render import token_change
from koroku_desktop.ui.viewer.timeline_model import (
    BOUNDARY_LIMIT,
    COLUMNS,
    TimelineModel,
    TimelineQuery,
)
from koroku_desktop.ui.viewer.timeline_panel import make_table
from koroku_desktop.ui.widgets.controls import note_label
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompactionInfo:
    """A compaction and the seq range of the events its summary replaced."""

    seq: int
    created_at: float
    event: CompactionEvent
    first_seq: int
    last_seq: int
    count: int | None = None
    """How many messages it folded in, by id (None: an old compaction, a seq range)."""

    def replaced(self) -> str:
        """The range in words, e.g. `#12 – #40` or `14 messages, #12 – #40`."""
        span = f"#{self.first_seq} – #{self.last_seq}"
        return span if self.count is None else f"{self.count} messages, {span}"


def read_compactions(reader: LogReader, conversation_id: str) -> list[CompactionInfo]:
    """Every compaction of a conversation, newest first, with the range it replaced.

    A summary that names what it covered (by id) replaced those messages, wherever they are
    in this log; an old one replaced the events after the previous compaction's range (or
    after the last clear before it) up to its `covers_up_to_seq`. Runs in a worker thread.
    """
    found: list[CompactionInfo] = []
    start = 1
    for entry in reader.entries(conversation_id, kinds=BOUNDARY_KINDS, limit=BOUNDARY_LIMIT):
        if not isinstance(entry, StoredEvent):
            continue
        event = entry.event
        if isinstance(event, ClearedEvent):
            start = entry.seq + 1
        elif isinstance(event, CompactionEvent):
            span = reader.summary_span(entry.event_id) if event.covered_ids is not None else None
            if span is not None:  # by id: where its messages are in this log
                count, first, last = span
                found.append(CompactionInfo(entry.seq, entry.created_at, event, first, last, count))
            else:
                last = event.covers_up_to_seq
                first = min(start, last)
                found.append(CompactionInfo(entry.seq, entry.created_at, event, first, last))
            start = last + 1
    found.reverse()
    return found


class CompactionsPanel(QWidget):
    """The list of compactions; selecting one shows its summary and the events it replaced."""

    def __init__(
        self, reader: LogReader, conversation_id: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._reader = reader
        self._conversation = conversation_id
        self._tasks = TaskSet()
        self._tasks_started = False
        self.compactions: list[CompactionInfo] = []
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 8, 0, 0)
        self.note = note_label("Loading compactions…")
        col.addWidget(self.note)
        split = QSplitter(Qt.Orientation.Vertical)
        self.list = QTreeWidget()
        self.list.setRootIsDecorated(False)
        self.list.setHeaderLabels(["#", "When", "Replaced events", "Tokens before → after"])
        header = self.list.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # The range and the token counts share what the seq and the time leave: every column
        # fitted to its text left most of a wide viewer empty, and scrolled sideways in a
        # narrow one (a cut text says itself in its tooltip).
        for stretched in (2, 3):
            header.setSectionResizeMode(stretched, QHeaderView.ResizeMode.Stretch)
        self.list.currentItemChanged.connect(self._current_changed)
        split.addWidget(self.list)
        lower = QSplitter(Qt.Orientation.Horizontal)
        self.summary = QTextBrowser()
        lower.addWidget(self.summary)
        replaced = QWidget()
        rcol = QVBoxLayout(replaced)
        rcol.setContentsMargins(0, 0, 0, 0)
        self.replaced_label = QLabel("The events a summary replaced appear here.")
        self.replaced_label.setObjectName("Muted")
        rcol.addWidget(self.replaced_label)
        self.replaced = TimelineModel(reader, self)
        self.replaced_table = make_table(self.replaced)
        # Every replaced event's context is "summarised in" this one: not shown. The content
        # takes the room (by name: the columns have moved before, and "Who" got it).
        self.replaced_table.setColumnHidden(COLUMNS.index("Context"), True)
        self.replaced_table.horizontalHeader().setSectionResizeMode(
            COLUMNS.index("Content"), QHeaderView.ResizeMode.Stretch
        )
        rcol.addWidget(self.replaced_table, 1)
        lower.addWidget(replaced)
        lower.setSizes([380, 520])
        split.addWidget(lower)
        split.setSizes([150, 470])
        col.addWidget(split, 1)

    def show_conversation(self, conversation_id: str) -> None:
        """Show the compactions of another conversation (read again if they were shown)."""
        if conversation_id == self._conversation:
            return
        self._conversation = conversation_id
        if self._tasks_started:
            self.load()

    def load(self) -> asyncio.Future[None]:
        """Read the compactions off the event loop and list them."""
        self._tasks_started = True
        task = self._tasks.start(self._load())
        return task

    async def _load(self) -> None:
        try:
            found = await asyncio.to_thread(read_compactions, self._reader, self._conversation)
        except Exception as exc:  # shown, never fatal
            log.warning("reading compactions failed", exc_info=True)
            self.note.setText(f"Could not read the compactions: {exc}")
            return
        self.compactions = found
        self.list.clear()
        for info in found:
            item = QTreeWidgetItem(
                [
                    str(info.seq),
                    when(info.created_at, "%Y-%m-%d %H:%M"),
                    info.replaced(),
                    token_change(info.event),
                ]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, info.seq)
            for stretched in (2, 3):
                item.setToolTip(stretched, item.text(stretched))
            self.list.addTopLevelItem(item)
        if not found:
            self.note.setText(
                "No compactions yet. When the conversation grows past the compaction threshold, "
                "Koroku folds older turns into a summary; every summary is listed here."
            )
        else:
            self.note.setText(
                f"{len(found)} compaction{'s' if len(found) != 1 else ''}, newest first. "
                "Select one to see its summary and the events it replaced."
            )
            self.select(0)

    def select(self, row: int) -> None:
        """Select the compaction in `row`."""
        item = self.list.topLevelItem(row)
        if item is not None:
            self.list.setCurrentItem(item)

    def _current_changed(self, item: QTreeWidgetItem | None, _prev: QTreeWidgetItem | None) -> None:
        if item is None:
            return
        info = self.compactions[self.list.indexOfTopLevelItem(item)]
        ev = info.event
        if info.count is None:
            detail = f"replaced #{info.first_seq}–#{info.last_seq} · {token_change(ev)} · "
            detail += f"live context kept from #{ev.kept_from_seq}"
        else:  # by id: its seqs are those of the log it was written in, maybe another device's
            detail = f"folded in {info.replaced()} · {token_change(ev)}"
        self.summary.setMarkdown(
            f"### Summary #{info.seq}\n\n*{when(info.created_at)} · {detail}*\n\n{ev.summary}"
        )
        self.replaced_label.setText(
            f"Events #{info.first_seq}–#{info.last_seq}, replaced by summary #{info.seq}:"
            if info.count is None
            else f"Events #{info.first_seq}–#{info.last_seq} (Context says which ones summary"
            f" #{info.seq} folded in):"
        )
        # Every event of an old compaction's range is "summarised in" it; a range found by
        # id may hold events that stayed live: then the column says so.
        self.replaced_table.setColumnHidden(4, info.count is None)
        self.replaced.set_query(
            TimelineQuery(
                after_seq=info.first_seq - 1,
                before_seq=info.last_seq + 1,
                conversation=self._conversation,
            )
        )

"""TimelinePanel: the whole log as a lazy history grouped by day, with conversation, kind and
date filters and a detail pane (readable or raw JSON)."""

from __future__ import annotations

import asyncio
from datetime import date, datetime, time, timedelta

from PySide6.QtCore import QDate, QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDateEdit,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.agent.ports import LogReader
from koroku_desktop.domain.conversations import Conversation
from koroku_desktop.domain.events import EVENT_KINDS
from koroku_desktop.domain.kinds import label_of
from koroku_desktop.ui.viewer.conversation_filter import ConversationFilter
from koroku_desktop.ui.viewer.detail_view import EntryDetail
from koroku_desktop.ui.viewer.history_view import HistoryList
from koroku_desktop.ui.viewer.timeline_model import (
    TimelineModel,
    TimelineQuery,
    first_seq_at,
)
from koroku_desktop.ui.widgets.tasks import TaskSet


def _day_start(day: QDate) -> datetime:
    return datetime.combine(date(day.year(), day.month(), day.day()), time.min)


def make_table(model: TimelineModel) -> QTableView:
    """A table view fit for a timeline model (shared with the compactions panel)."""
    table = QTableView()
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.setAlternatingRowColors(True)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(24)
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    for col, width in enumerate((64, 150, 100, 80, 170)):
        header.resizeSection(col, width)
    header.setStretchLastSection(True)
    return table


class TimelinePanel(QWidget):
    """Every event of the log, newest first; filters by kind and date; jumps to a seq."""

    status = Signal(str)

    def __init__(
        self, reader: LogReader, book: ConversationBook, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._reader = reader
        self.model = TimelineModel(reader, self)
        self._tasks = TaskSet()
        self._jump_seq: int | None = None
        self._filter_generation = 0
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 8, 0, 0)
        self.conversation = ConversationFilter(book)
        self.conversation.changed.connect(lambda _c: self.apply_filters())
        self.conversation.loaded.connect(self._conversations_read)
        self.conversation.status.connect(self.status)
        top = QHBoxLayout()
        top.addWidget(self.conversation, 1)
        top.addLayout(self._filter_bar())
        col.addLayout(top)
        col.addLayout(self._date_bar())
        self.jump_bar = self._jump_bar()
        col.addWidget(self.jump_bar)
        split = QSplitter(Qt.Orientation.Vertical)
        self.table = HistoryList(self.model)
        self.table.selectionModel().selectionChanged.connect(self._selected)
        split.addWidget(self.table)
        self.detail = EntryDetail()
        split.addWidget(self.detail)
        split.setSizes([420, 260])
        col.addWidget(split, 1)
        self.model.loading_changed.connect(self._loading)
        self.model.failed.connect(self.status)
        self.model.set_query(TimelineQuery())
        self.conversation.load()

    # -- building ----------------------------------------------------------------------

    def _filter_bar(self) -> QHBoxLayout:
        """Kinds (a menu of checkable kinds) and the count, beside the conversation."""
        row = QHBoxLayout()
        self.kinds_button = QToolButton()
        self.kinds_button.setText("Kinds")
        self.kinds_button.setToolTip("Which kinds of events to show")
        self.kinds_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.kinds_button)
        self.kind_boxes: dict[str, QAction] = {}
        for kind in EVENT_KINDS:
            box = menu.addAction(label_of(kind))
            box.setCheckable(True)
            box.setChecked(True)
            box.toggled.connect(self._kinds_changed)
            self.kind_boxes[kind] = box
        self.kinds_button.setMenu(menu)
        row.addWidget(self.kinds_button)
        self.count_label = QLabel("")
        self.count_label.setObjectName("Muted")
        row.addWidget(self.count_label)
        return row

    def _date_bar(self) -> QHBoxLayout:
        """The date range: a row of its own (it fits a narrow window)."""
        row = QHBoxLayout()
        self.date_box = QCheckBox("From")
        self.date_box.toggled.connect(self._date_toggled)
        row.addWidget(self.date_box)
        today = QDate.currentDate()
        self.date_from = QDateEdit(today.addDays(-7))
        self.date_to = QDateEdit(today)
        for edit in (self.date_from, self.date_to):
            edit.setCalendarPopup(True)
            edit.setDisplayFormat("yyyy-MM-dd")
            edit.setEnabled(False)
            edit.dateChanged.connect(self.apply_filters)
        row.addWidget(self.date_from)
        row.addWidget(QLabel("to"))
        row.addWidget(self.date_to)
        row.addStretch(1)
        return row

    def _kinds_changed(self) -> None:
        shown = self.selected_kinds()
        count = len(self.kind_boxes) if shown is None else len(shown)
        self.kinds_button.setText("Kinds" if shown is None else f"Kinds ({count})")
        self.apply_filters()

    def _jump_bar(self) -> QFrame:
        bar = QFrame()
        bar.setObjectName("JumpBar")
        row = QHBoxLayout(bar)
        row.setContentsMargins(0, 0, 0, 0)
        self.jump_label = QLabel("")
        self.jump_label.setObjectName("Muted")
        row.addWidget(self.jump_label, 1)
        newest = QPushButton("Back to the newest events")
        newest.clicked.connect(self.show_newest)
        row.addWidget(newest)
        bar.setVisible(False)
        return bar

    # -- filters and jumps -------------------------------------------------------------

    def selected_kinds(self) -> tuple[str, ...] | None:
        """The kinds ticked (None when all are)."""
        kinds = tuple(k for k, box in self.kind_boxes.items() if box.isChecked())
        return None if len(kinds) == len(self.kind_boxes) else kinds

    def _date_toggled(self, on: bool) -> None:
        self.date_from.setEnabled(on)
        self.date_to.setEnabled(on)
        self.apply_filters()

    def refresh(self) -> asyncio.Future[None]:
        """Read the registry again, then the timeline: a kind filter over every conversation
        reads each one's index, so a conversation new since the last read must be known
        first. A jump or a filter chosen meanwhile is left as it is."""
        return self._tasks.start(self._refresh())

    async def _refresh(self) -> None:
        asked = self._filter_generation
        await self.conversation.load()
        if asked == self._filter_generation:
            await self.apply_filters()

    def apply_filters(self) -> asyncio.Future[None]:
        """Show the events of the ticked kinds in the date range (bounds read off the loop)."""
        task = self._tasks.start(self._apply_filters())
        return task

    async def _apply_filters(self) -> None:
        self._filter_generation += 1
        mine = self._filter_generation
        self._jump_seq = None
        self.jump_bar.setVisible(False)
        after: int | None = None
        before: int | None = None
        if self.date_box.isChecked():
            start = _day_start(self.date_from.date())
            end = _day_start(self.date_to.date()) + timedelta(days=1)
            after, before = await asyncio.to_thread(
                self._date_bounds, start.timestamp(), end.timestamp()
            )
        if mine != self._filter_generation:
            return  # newer filters were chosen meanwhile
        query = TimelineQuery(self.selected_kinds(), after, before, self.conversation.current())
        self.model.set_query(query)
        await self.model.first_page()

    def _date_bounds(self, start: float, end: float) -> tuple[int, int]:
        newest = self._reader.entries(None, newest_first=True, limit=1)
        last = newest[0].seq if newest else 0
        first = first_seq_at(self._reader, start, last)
        past = first_seq_at(self._reader, end, last)
        return first - 1, past

    def jump_to(self, seq: int) -> asyncio.Future[int]:
        """Show the event `seq` selected, with the filters cleared; resolves to its row."""
        task = self._tasks.start(self._jump(seq))
        return task

    async def _jump(self, seq: int) -> int:
        for box in self.kind_boxes.values():
            box.blockSignals(True)
            box.setChecked(True)
            box.blockSignals(False)
        self.kinds_button.setText("Kinds")
        self.date_box.blockSignals(True)
        self.date_box.setChecked(False)
        self.date_box.blockSignals(False)
        self.date_from.setEnabled(False)
        self.date_to.setEnabled(False)
        self.conversation.select(None, quiet=True)
        self._filter_generation += 1
        row = await self.model.jump_to(seq)
        self._jump_seq = seq
        self.jump_label.setText(f"Showing the log around event #{seq}; newer events are hidden.")
        self.jump_bar.setVisible(True)
        self.select_row(row)
        return row

    def show_newest(self) -> None:
        """Leave a jump: show the log from its newest event again."""
        self.apply_filters()

    def select_row(self, row: int) -> None:
        """Select and reveal a row."""
        if row < 0:
            return
        index = self.model.index(row, 0)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
        flags |= QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(index, flags)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    # -- reacting ----------------------------------------------------------------------

    def _conversations_read(self, found: dict[str, Conversation]) -> None:
        self.model.conversation_ids = tuple(found)
        self.model.titles = {cid: c.title for cid, c in found.items()}
        self.detail.titles = self.model.titles
        self.table.scheduleDelayedItemsLayout()  # rows name their conversation: taller

    def _selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = {i.row() for i in selected.indexes()}
        self.detail.show_entry(self.model.entry_at(min(rows)) if rows else None)

    def _loading(self, loading: bool) -> None:
        n = self.model.rowCount()
        more = "" if self.model.exhausted else "+"
        self.count_label.setText("Loading…" if loading else f"{n:,}{more} events")
        self.count_label.setToolTip("" if self.model.exhausted else "Scroll down for more")

"""HistoryDialog: Koroku's whole memory, open to the user — timeline, search, compactions,
memory files and export."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.agent.ports import LogReader
from koroku_desktop.agent.recall import Finder
from koroku_desktop.ui.viewer.compactions_panel import CompactionsPanel
from koroku_desktop.ui.viewer.export import Exporter, ExportWriter
from koroku_desktop.ui.viewer.memory_panel import MemoryPanel, MemoryRecorder
from koroku_desktop.ui.viewer.search_panel import SearchPanel
from koroku_desktop.ui.viewer.timeline_panel import TimelinePanel
from koroku_desktop.ui.widgets.facts_editor import FactsEditor, FactsKeeper
from koroku_desktop.ui.widgets.icons import app_icon
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

TABS = ("Timeline", "Search", "Compactions", "Memory")


class HistoryDialog(QDialog):
    """A non-modal window over the event log and the memory folder; reads run off the loop."""

    def __init__(
        self,
        log: LogReader,
        export: ExportWriter,
        memory_folder: Path,
        conversation_id: str,
        parent: QWidget | None = None,
        *,
        find: Finder | None = None,
        progress: Callable[[], Awaitable[str]] | None = None,
        record_memory: MemoryRecorder | None = None,
        facts: FactsKeeper | None = None,
    ) -> None:
        """`find` is the one search; `progress` says how much of the log is embedded;
        `record_memory` makes memory-file edits events in the log; `facts` shows what
        Koroku knows about the user at the top of the Memory tab."""
        super().__init__(parent)
        self.setWindowTitle("Koroku — History & memory")
        self.setWindowIcon(app_icon())
        self.setModal(False)
        self.resize(1040, 740)
        col = QVBoxLayout(self)
        col.setContentsMargins(14, 12, 14, 12)
        intro = QLabel(
            "<b>Everything Koroku remembers.</b> Every message, tool call, summary and clear "
            "is kept in the log — nothing is ever deleted."
        )
        intro.setWordWrap(True)
        col.addWidget(intro)
        self.tabs = QTabWidget()
        self.timeline = TimelinePanel(log, conversation_id)
        self.search = SearchPanel(log, find=find)
        self.compactions = CompactionsPanel(log, conversation_id)
        self.memory = MemoryPanel(memory_folder, record=record_memory)
        self.facts = FactsEditor(facts, conversation_id) if facts is not None else None
        memory_tab = self._memory_tab(self.memory, self.facts)
        for name, panel in zip(
            TABS, (self.timeline, self.search, self.compactions, memory_tab), strict=True
        ):
            self.tabs.addTab(panel, name)
        self.tabs.currentChanged.connect(self._tab_changed)
        col.addWidget(self.tabs, 1)
        col.addLayout(self._buttons(export))
        self.search.jump_requested.connect(self.jump_to)
        self.search.memory_requested.connect(self.open_memory)
        self.timeline.status.connect(self.show_status)
        self._loaded: set[int] = {0}
        self._progress = progress
        self._tasks = TaskSet()

    @staticmethod
    def _memory_tab(files: MemoryPanel, facts: FactsEditor | None) -> QWidget:
        """The facts about the user above the daily memory files (or the files alone)."""
        if facts is None:
            return files
        split = QSplitter(Qt.Orientation.Vertical)
        for title, panel in (("What Koroku knows about you", facts), ("Daily notes", files)):
            box = QWidget()
            col = QVBoxLayout(box)
            col.setContentsMargins(0, 8, 0, 0)
            head = QLabel(f"<b>{title}</b>")
            col.addWidget(head)
            col.addWidget(panel, 1)
            split.addWidget(box)
        split.setSizes([380, 320])
        return split

    def _buttons(self, export: ExportWriter) -> QHBoxLayout:
        row = QHBoxLayout()
        self.status = QLabel("")
        self.status.setObjectName("Muted")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.status, 1)
        refresh = QPushButton("Refresh")
        refresh.setToolTip("Read the log and the memory folder again")
        refresh.clicked.connect(self.refresh)
        row.addWidget(refresh)
        self.exporter = Exporter(export, self)
        self.exporter.finished.connect(self.show_status)
        self.export_button = self.exporter.button(self)
        row.addWidget(self.export_button)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        row.addWidget(close)
        return row

    def show_status(self, text: str) -> None:
        """A line of news at the bottom (export done, read failed...)."""
        self.status.setText(text)

    def show_tab(self, name: str) -> None:
        """Switch to a tab by its title."""
        self.tabs.setCurrentIndex(TABS.index(name))

    def _tab_changed(self, index: int) -> None:
        if index in self._loaded:
            return
        self._loaded.add(index)
        if index == TABS.index("Compactions"):
            self.compactions.load()
        elif index == TABS.index("Memory"):
            self.memory.refresh()
            if self.facts is not None:
                self.facts.reload()
        elif index == TABS.index("Search"):
            self.search.box.setFocus()
            if self._progress is not None:
                self._tasks.start(self._show_progress(self._progress))

    async def _show_progress(self, progress: Callable[[], Awaitable[str]]) -> None:
        try:
            self.search.show_progress(await progress())
        except Exception:  # progress is a nicety: never an error dialog
            log.warning("embedding progress unavailable", exc_info=True)

    def refresh(self) -> None:
        """Read everything again (the log grows while the dialog is open)."""
        self.timeline.apply_filters()
        if TABS.index("Compactions") in self._loaded:
            self.compactions.load()
        if TABS.index("Memory") in self._loaded:
            self.memory.refresh()
            if self.facts is not None:
                self.facts.reload()

    def open_memory(self, name: str) -> None:
        """Show the memory file `name` (e.g. `30-11-2026.md`) in the Memory tab."""
        self.show_tab("Memory")
        self.memory.show_file(name)

    def jump_to(self, seq: int) -> asyncio.Future[int]:
        """Show event `seq` selected in the timeline."""
        self.show_tab("Timeline")
        return self.timeline.jump_to(seq)

"""HistoryDialog: Koroku's whole memory, open to the user — timeline (every conversation, or
one), search, compactions, memory files, export and import."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
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

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.agent.ports import ConversationLog
from koroku_desktop.agent.recall import Finder
from koroku_desktop.domain.conversations import Conversation
from koroku_desktop.ui.viewer.compactions_panel import CompactionsPanel
from koroku_desktop.ui.viewer.export import Exporter, ExportTarget, ExportWriter
from koroku_desktop.ui.viewer.import_run import Importer, ImportRunner
from koroku_desktop.ui.viewer.memory_panel import MemoryPanel, MemoryRecorder
from koroku_desktop.ui.viewer.search_panel import SearchPanel
from koroku_desktop.ui.viewer.timeline_panel import TimelinePanel
from koroku_desktop.ui.widgets.controls import note_label, push_button, vertical_scroll
from koroku_desktop.ui.widgets.facts_editor import FactsEditor, FactsKeeper
from koroku_desktop.ui.widgets.icons import app_icon
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

TABS = ("Timeline", "Search", "Compactions", "Memory")


class HistoryDialog(QDialog):
    """A non-modal window over the event log and the memory folder; reads run off the loop."""

    conversations_changed = Signal()
    """A conversation was restored or imported here (the chat's list reads the log again)."""

    def __init__(
        self,
        log: ConversationLog,
        export: ExportWriter,
        memory_folder: Path,
        conversation_id: str,
        parent: QWidget | None = None,
        *,
        find: Finder | None = None,
        progress: Callable[[], Awaitable[str]] | None = None,
        record_memory: MemoryRecorder | None = None,
        facts: FactsKeeper | None = None,
        conversations: ConversationBook | None = None,
        importer: ImportRunner | None = None,
    ) -> None:
        """`conversation_id` is the one talked in (its compactions and live context are
        shown while the viewer shows all of them); `find` is the one search; `progress` says
        how much of the log is embedded; `record_memory` makes memory-file edits events in
        the log; `facts` shows what Koroku knows about the user at the top of the Memory
        tab; `conversations` is the registry (one over `log` when not given); `importer`
        brings in other exports (no Import… button without it)."""
        super().__init__(parent)
        self.conversation_id = conversation_id
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
        self.timeline = TimelinePanel(log, conversations or ConversationBook(log))
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
        self.importer = Importer(importer, self) if importer is not None else None
        if self.importer is not None:
            col.addWidget(self.importer.progress)
            self.importer.finished.connect(self.show_status)
            self.importer.imported.connect(self._imported)
        col.addLayout(self._buttons(export))
        self.search.jump_requested.connect(self.jump_to)
        self.search.memory_requested.connect(self.open_memory)
        self.timeline.status.connect(self.show_status)
        chooser = self.timeline.conversation
        chooser.loaded.connect(self._conversations_read)
        chooser.changed.connect(self._conversation_chosen)
        chooser.restored.connect(lambda _cid: self.conversations_changed.emit())
        self._loaded: set[int] = {0}
        self._progress = progress
        self._tasks = TaskSet()

    @staticmethod
    def _memory_tab(files: MemoryPanel, facts: FactsEditor | None) -> QWidget:
        """The facts about the user above the daily memory files (or the files alone). The
        facts scroll when their pane is shorter than the list, the form and its note (a short
        window): squeezed, the form's buttons were drawn over its text."""
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
            if panel is facts:
                scroll = vertical_scroll(box)
                # The tab's own background through it (a scroll area paints the window's).
                box.setAutoFillBackground(False)
                scroll.viewport().setAutoFillBackground(False)
                split.addWidget(scroll)
            else:
                split.addWidget(box)
        split.setSizes([380, 320])
        return split

    def _buttons(self, export: ExportWriter) -> QHBoxLayout:
        row = QHBoxLayout()
        self.status = note_label()  # a long line wraps, never widens the window
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.status, 1)
        row.addWidget(
            push_button("Refresh", self.refresh, tip="Read the log and the memory folder again")
        )
        if self.importer is not None:
            self.import_button = self.importer.button(self)
            row.addWidget(self.import_button)
        self.exporter = Exporter(export, self.export_target, self)
        self.exporter.finished.connect(self.show_status)
        self.export_button = self.exporter.button(self)
        row.addWidget(self.export_button)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        row.addWidget(close)
        return row

    def export_target(self) -> ExportTarget:
        """What Export… writes: the conversation shown, or every one (a live context: the
        conversation shown, or the one talked in)."""
        chosen = self.timeline.conversation.current()
        if chosen is None:
            return ExportTarget(None, "", self.conversation_id)
        found = self.timeline.conversation.conversations.get(chosen)
        return ExportTarget(chosen, found.title if found else chosen[:8], chosen)

    def _conversations_read(self, found: dict[str, Conversation]) -> None:
        self.search.titles = {cid: c.title for cid, c in found.items()}

    def _conversation_chosen(self, chosen: str | None) -> None:
        """The compactions follow the conversation shown (the one talked in for all)."""
        self.compactions.show_conversation(chosen or self.conversation_id)

    def _imported(self) -> None:
        self.refresh()
        self.conversations_changed.emit()

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
        self.timeline.refresh()
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

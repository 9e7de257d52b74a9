"""SearchPanel: full-text search over the whole log, with highlighted snippets.

Choosing a hit asks the dialog to jump to the event in the timeline; choosing a memory-file
piece (found by meaning) asks it to open that file in the memory panel.
"""

from __future__ import annotations

import asyncio
import html
import logging

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.agent.ports import LogReader
from koroku_desktop.agent.recall import Finder
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.domain.recall import MemoryMatch
from koroku_desktop.render.text import when
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.controls import note_label, push_button, single_shot
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

HIT_LIMIT = 200
SEQ_ROLE = Qt.ItemDataRole.UserRole + 1
FILE_ROLE = Qt.ItemDataRole.UserRole + 2
MEMORY_LIMIT = 5


def snippet_html(snippet: str) -> str:
    """A snippet as HTML, its `[[match]]` markers turned into highlights."""
    t = theme.current()
    text = html.escape(" ".join(snippet.split()))
    open_tag = f'<span style="background:{t.accent_soft}; color:{t.text}; font-weight:600">'
    return text.replace("[[", open_tag).replace("]]", "</span>")


def hit_html(hit: SearchHit, titles: dict[str, str] | None = None) -> str:
    """One hit: seq, date, who, the conversation it comes from, and the highlighted snippet."""
    t = theme.current()
    who = "summary" if hit.kind == "compaction" else (hit.role or hit.kind)
    head = f"#{hit.seq} · {when(hit.created_at, '%Y-%m-%d %H:%M')} · {html.escape(who)}"
    where = (titles or {}).get(hit.conversation_id) or f"conversation {hit.conversation_id[:8]}"
    head += f" · in “{html.escape(where)}”"
    return f'<span style="color:{t.muted}">{head}</span><br>{snippet_html(hit.snippet)}'


def memory_html(match: MemoryMatch) -> str:
    """One memory-file piece: the file, then its text."""
    t = theme.current()
    head = f"memory/{html.escape(match.file)} · memory file"
    return f'<span style="color:{t.muted}">{head}</span><br>{snippet_html(match.text)}'


class SearchPanel(QWidget):
    """A search box and its hits; activating a hit emits `jump_requested(seq)`, a memory-file
    piece `memory_requested(file name)`."""

    jump_requested = Signal(int)
    memory_requested = Signal(str)

    def __init__(
        self, searcher: LogReader, parent: QWidget | None = None, *, find: Finder | None = None
    ) -> None:
        """`find` is the hybrid search (keywords and meaning); without it, full-text only."""
        super().__init__(parent)
        self._searcher = searcher
        self._find = find
        self._tasks = TaskSet()
        self._generation = 0
        self.hits: list[SearchHit] = []
        self.titles: dict[str, str] = {}
        """Each conversation's title, by id (a hit says where it comes from)."""
        self.memory: list[MemoryMatch] = []
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 8, 0, 0)
        row = QHBoxLayout()
        self.box = QLineEdit()
        self.box.setPlaceholderText("Search everything ever said — by words and by meaning")
        self.box.setClearButtonEnabled(True)
        self.box.returnPressed.connect(self.search_now)
        row.addWidget(self.box, 1)
        row.addWidget(push_button("Search", self.search_now, name="Primary"))
        col.addLayout(row)
        self.summary = note_label(
            "Type to search the whole log, including cleared and compacted history."
        )
        col.addWidget(self.summary)
        self.progress = note_label()
        """How much of the log is embedded for search by meaning (see `show_progress`)."""
        self.progress.setVisible(False)
        col.addWidget(self.progress)
        self.results = QListWidget()
        self.results.setWordWrap(True)
        self.results.setSpacing(1)
        self.results.setAlternatingRowColors(True)
        self.results.itemActivated.connect(self._activated)
        self.results.itemDoubleClicked.connect(self._activated)
        col.addWidget(self.results, 1)
        hint = note_label(
            "Double-click or press Enter on a hit to show it in the timeline"
            " (a memory file's opens in Memory)."
        )
        col.addWidget(hint)
        self._debounce = single_shot(self, 350, self.search_now)
        self.box.textEdited.connect(lambda _t: self._debounce.start())

    def show_progress(self, text: str) -> None:
        """Show the embedding progress line ('' hides it)."""
        self.progress.setText(text)
        self.progress.setVisible(bool(text))

    def search_now(self) -> asyncio.Future[list[SearchHit]]:
        """Run the search for the box's text off the event loop; resolves to the hits."""
        self._debounce.stop()
        task = self._tasks.start(self._search(self.box.text()))
        return task

    async def _search(self, query: str) -> list[SearchHit]:
        self._generation += 1
        generation = self._generation
        if not query.strip():
            self._show([], "")
            return []
        self.summary.setText("Searching…")
        try:
            note: str | None = None
            memory: list[MemoryMatch] = []
            if self._find is not None:
                hits, note, memory = await self._find(query, HIT_LIMIT)
            else:
                hits = await asyncio.to_thread(self._searcher.search, query, HIT_LIMIT)
        except Exception as exc:  # a failed search is reported, never fatal
            log.warning("search failed", exc_info=True)
            self.summary.setText(f"The search failed: {exc}")
            return []
        if generation == self._generation:
            self._show(hits, query, memory[:MEMORY_LIMIT])
            if note:
                self.summary.setText(f"{self.summary.text()} ({note})")
        return hits

    def _show(
        self, hits: list[SearchHit], query: str, memory: list[MemoryMatch] | None = None
    ) -> None:
        memory = memory or []
        self.hits, self.memory = hits, memory
        self.results.clear()
        rows: list[tuple[int, int | str, str]] = [
            (SEQ_ROLE, h.seq, hit_html(h, self.titles)) for h in hits
        ]
        rows += [(FILE_ROLE, m.file, memory_html(m)) for m in memory]
        for role, key, text in rows:
            item = QListWidgetItem()
            item.setData(role, key)
            label = QLabel(text)
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setWordWrap(True)
            label.setContentsMargins(8, 5, 8, 5)
            label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
            self.results.addItem(item)
            self.results.setItemWidget(item, label)
        self._fit_rows()
        if not query:
            self.summary.setText(
                "Type to search the whole log, including cleared and compacted history."
            )
        elif not hits and not memory:
            self.summary.setText(f"No match for “{query}”.")
        else:
            more = " (the newest shown)" if len(hits) >= HIT_LIMIT else ""
            parts = [f"{len(hits)} match{'es' if len(hits) != 1 else ''}{more}"] if hits else []
            if memory:
                parts.append(f"{len(memory)} in the memory files")
            self.summary.setText(", ".join(parts) + ".")

    def _fit_rows(self) -> None:
        width = max(200, self.results.viewport().width() - 4)
        for row in range(self.results.count()):
            item = self.results.item(row)
            label = self.results.itemWidget(item)
            if label is not None:
                item.setSizeHint(QSize(width, label.heightForWidth(width)))

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Re-wrap the hits to the new width."""
        super().resizeEvent(event)
        self._fit_rows()

    def _activated(self, item: QListWidgetItem) -> None:
        seq = item.data(SEQ_ROLE)
        file = item.data(FILE_ROLE)
        if isinstance(seq, int):
            self.jump_requested.emit(seq)
        elif isinstance(file, str):
            self.memory_requested.emit(file)

    def activate_row(self, row: int) -> None:
        """Choose the hit in `row` (as a double-click would)."""
        item = self.results.item(row)
        if item is not None:
            self._activated(item)

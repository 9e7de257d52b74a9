"""MemoryPanel: the daily memory files, newest first, rendered as Markdown and editable.

Edits are saved atomically (`fsutil.atomic_write`: a temporary file, then a rename). If the
file changed on disk while it was being edited (a compaction appended a summary), saving stops
and says so, offering to keep either version. With `record`, a save is an event in the log
instead (agent/memory_events.py, off the event loop): the files are written from the log, and
a summary appended meanwhile is kept after the edit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.fsutil import atomic_write
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

PATH_ROLE = Qt.ItemDataRole.UserRole + 1

MemoryRecorder = Callable[[str, str, str], str]
"""Records a person's edit (day, new text, the text it was edited from) in the log and
writes the files; returns the day's text as it now stands. Blocking."""


def memory_date(path: Path) -> datetime | None:
    """The day of a memory file named dd-mm-yyyy.md, or None."""
    try:
        return datetime.strptime(path.stem, "%d-%m-%Y")
    except ValueError:
        return None


def memory_files(folder: Path) -> list[Path]:
    """The memory files, newest day first (other .md files after them, newest changed first)."""
    if not folder.is_dir():
        return []
    files = [p for p in folder.glob("*.md") if p.is_file()]
    dated = sorted(
        (p for p in files if memory_date(p)), key=lambda p: memory_date(p) or 0, reverse=True
    )
    other = sorted((p for p in files if not memory_date(p)), key=lambda p: -p.stat().st_mtime)
    return dated + other


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist (any other problem raises)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


class MemoryPanel(QWidget):
    """Lists the memory files; shows one rendered, or in an editor while editing."""

    def __init__(
        self, folder: Path, parent: QWidget | None = None, *, record: MemoryRecorder | None = None
    ) -> None:
        """`record` makes a save an event in the log (None: the file is written directly)."""
        super().__init__(parent)
        self.folder = folder
        self.record = record
        self.saving: asyncio.Future[bool] | None = None
        """The recording of the last save, while it runs (with `record`)."""
        self._tasks = TaskSet()
        self.current: Path | None = None
        self.loaded_text: str | None = None
        """The file's text as it was when opened (what a save expects to find on disk)."""
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._changed_on_disk)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 8, 0, 0)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.files = QListWidget()
        self.files.currentItemChanged.connect(self._file_chosen)
        split.addWidget(self.files)
        split.addWidget(self._editor_side())
        split.setSizes([190, 700])
        row.addWidget(split)

    def _editor_side(self) -> QWidget:
        side = QWidget()
        col = QVBoxLayout(side)
        col.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.title = QLabel("")
        self.title.setObjectName("Muted")
        self.title.setWordWrap(True)  # a long path breaks at its slashes, never widens the viewer
        bar.addWidget(self.title, 1)
        self.edit_button = QPushButton("Edit")
        self.edit_button.clicked.connect(self.start_editing)
        self.save_button = QPushButton("Save")
        self.save_button.setObjectName("Primary")
        self.save_button.clicked.connect(lambda: self.save())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.reload)
        for b in (self.edit_button, self.cancel_button, self.save_button):
            bar.addWidget(b)
        col.addLayout(bar)
        self.note = QFrame()
        self.note.setObjectName("ApprovalCard")
        nrow = QHBoxLayout(self.note)
        self.note_label = QLabel("")
        self.note_label.setWordWrap(True)
        nrow.addWidget(self.note_label, 1)
        self.keep_mine = QPushButton("Save mine anyway")
        self.keep_mine.clicked.connect(lambda: self.save(force=True))
        self.take_theirs = QPushButton("Discard mine, reload")
        self.take_theirs.clicked.connect(self.reload)
        nrow.addWidget(self.keep_mine)
        nrow.addWidget(self.take_theirs)
        self.note.setVisible(False)
        col.addWidget(self.note)
        self.stack = QStackedWidget()
        self.view = QTextBrowser()
        self.view.setOpenExternalLinks(True)
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("Code")
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.editor)
        col.addWidget(self.stack, 1)
        self._set_editing(False)
        return side

    # -- files -------------------------------------------------------------------------

    def refresh(self) -> None:
        """List the files again, keeping the current one selected."""
        keep = self.current
        self.files.blockSignals(True)
        self.files.clear()
        for path in memory_files(self.folder):
            day = memory_date(path)
            label = day.strftime("%A %d %B %Y") if day else path.name
            item = QListWidgetItem(label)
            item.setData(PATH_ROLE, str(path))
            item.setToolTip(str(path))
            self.files.addItem(item)
        self.files.blockSignals(False)
        if self.files.count() == 0:
            self.title.setText(f"No memory files yet in {self.folder}.")
            self.view.setMarkdown(
                "Each time Koroku compacts the conversation, it appends the summary to the "
                "day's memory file here. You can read and correct them; Koroku recalls them."
            )
            self.edit_button.setEnabled(False)
            return
        paths = [self.files.item(i).data(PATH_ROLE) for i in range(self.files.count())]
        row = paths.index(str(keep)) if keep is not None and str(keep) in paths else 0
        self.files.setCurrentRow(row)
        if keep is None or str(keep) not in paths:
            self.open(Path(paths[0]))

    def show_file(self, name: str) -> bool:
        """Select and show the memory file `name` (False when there is no such file)."""
        self.refresh()
        for row in range(self.files.count()):
            if Path(self.files.item(row).data(PATH_ROLE)).name == name:
                self.files.setCurrentRow(row)
                return True
        return False

    def _file_chosen(self, item: QListWidgetItem | None, _prev: QListWidgetItem | None) -> None:
        if item is not None:
            self.open(Path(item.data(PATH_ROLE)))

    def open(self, path: Path) -> None:
        """Show a memory file (leaving any edit of another one)."""
        if self.current is not None:
            self._watcher.removePath(str(self.current))
        self.current = path
        self._watcher.addPath(str(path))
        self.reload()

    def reload(self) -> None:
        """Read the file from disk again, dropping unsaved edits."""
        if self.current is None:
            return
        self.loaded_text = read_text(self.current) or ""
        self.view.setMarkdown(self.loaded_text)
        self.editor.setPlainText(self.loaded_text)
        self.title.setText(str(self.current))
        self.edit_button.setEnabled(True)
        self.note.setVisible(False)
        self._set_editing(False)

    # -- editing -----------------------------------------------------------------------

    @property
    def editing(self) -> bool:
        """The editor is shown."""
        return self.stack.currentIndex() == 1

    def _set_editing(self, on: bool) -> None:
        self.stack.setCurrentIndex(1 if on else 0)
        self.edit_button.setVisible(not on)
        self.save_button.setVisible(on)
        self.cancel_button.setVisible(on)

    def start_editing(self) -> None:
        """Switch to the editor."""
        if self.current is not None:
            self._set_editing(True)
            self.editor.setFocus()

    def save(self, *, force: bool = False) -> bool:
        """Save the editor's text atomically; False (and a note) if the file changed meanwhile."""
        if self.current is None:
            return False
        on_disk = read_text(self.current)
        if not force and on_disk is not None and on_disk != self.loaded_text:
            self._show_conflict()
            return False
        text = self.editor.toPlainText()
        if self.record is not None:
            self.saving = self._tasks.start(self._record(self.current, text))
            return True
        try:
            atomic_write(self.current, text, keep_mode=True)
        except OSError as exc:
            self._show_note(f"Could not save {self.current.name}: {exc}", conflict=False)
            return False
        self._saved(text)
        return True

    async def _record(self, path: Path, text: str) -> bool:
        """Record the edit in the log off the loop, then show the day as it now stands."""
        assert self.record is not None
        base = self.loaded_text or ""
        self.loaded_text = text  # the watcher must not take our own write for someone else's
        try:
            now = await asyncio.to_thread(self.record, path.stem, text, base)
        except Exception as exc:  # shown, the edit stays in the editor
            log.warning("recording the memory edit failed", exc_info=True)
            self.loaded_text = base
            self._show_note(f"Could not save {path.name}: {exc}", conflict=False)
            return False
        if self.current == path:
            self.editor.setPlainText(now)
            self._saved(now)
        return True

    def _saved(self, text: str) -> None:
        assert self.current is not None
        self.loaded_text = text
        self._watcher.removePath(str(self.current))
        self._watcher.addPath(str(self.current))  # os.replace gave the path a new file
        self.view.setMarkdown(text)
        self.note.setVisible(False)
        self._set_editing(False)
        self.title.setText(f"{self.current} — saved")

    def _show_conflict(self) -> None:
        self._show_note(
            "This file changed on disk since you opened it (Koroku may have added a summary). "
            "Your edits are not saved yet: save them over the new version, or discard them "
            "and load what is on disk.",
            conflict=True,
        )

    def _show_note(self, text: str, *, conflict: bool) -> None:
        self.note_label.setText(text)
        self.keep_mine.setVisible(conflict)
        self.take_theirs.setVisible(conflict)
        self.note.setVisible(True)

    def _changed_on_disk(self, path: str) -> None:
        if self.current is None or path != str(self.current):
            return
        if read_text(self.current) == self.loaded_text:
            return  # our own save, or a touch without a change
        if self.editing:
            self._show_conflict()
        else:
            self.reload()
            self.title.setText(f"{self.current} — reloaded: it changed on disk")
        if path not in self._watcher.files():
            self._watcher.addPath(path)

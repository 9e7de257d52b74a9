"""Import from the viewer: a Koroku JSON export, or ChatGPT's or Claude's data export
(`conversations.json` or the zip), through the code `koroku import` uses (app/imports.py).

The import runs in a worker thread with its progress shown in the viewer and a Cancel
button; a cancel stops before the conversation being written (none is left half-imported),
and a damaged or foreign file is one line with nothing imported.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QProgressBar,
    QPushButton,
    QWidget,
)

from koroku_desktop.app.imports import ImportCancelled, ImportOutcome, ImportRefused, Progress
from koroku_desktop.ui.widgets.controls import note_label
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

ImportRunner = Callable[[Path, Progress, Callable[[], bool]], ImportOutcome]
"""Imports a file (path, progress(done, total, what), cancelled()) into the data dir;
blocking. Raises `ImportRefused` or `ImportCancelled` (app/imports.py `import_file`)."""

FILE_FILTER = "Koroku, ChatGPT or Claude export (*.json *.zip);;All files (*)"


def first_upper(text: str) -> str:
    """A sentence begins with a capital."""
    return text[:1].upper() + text[1:]


class ImportProgress(QWidget):
    """The running import: what it does, a bar, and Cancel. Hidden when none runs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.label = note_label()
        row.addWidget(self.label, 1)
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(220)
        self.bar.setTextVisible(False)
        row.addWidget(self.bar)
        self.cancel_button = QPushButton("Cancel")
        row.addWidget(self.cancel_button)
        self.setVisible(False)

    def show_step(self, done: int, total: int, what: str) -> None:
        """`done` of `total` (0: not known yet, the bar runs) `what`."""
        self.bar.setRange(0, max(0, total))
        self.bar.setValue(min(done, total))
        self.label.setText(f"Importing: {done:,} of {total:,} {what}…" if total else f"{what}…")


class Importer(QObject):
    """Asks for a file, imports it off the event loop with progress, reports in one line."""

    finished = Signal(str)  # the line to show
    imported = Signal()  # something may have come in (a cancel keeps the chats before it)
    _stepped = Signal(int, int, str)  # from the worker thread (queued to the GUI's)

    def __init__(self, run: ImportRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.run = run
        self.progress = ImportProgress()
        self.progress.cancel_button.clicked.connect(self.cancel)
        self._stepped.connect(self.progress.show_step)
        self._stop = threading.Event()
        self._tasks = TaskSet()
        self._button: QPushButton | None = None
        self.running: asyncio.Future[str] | None = None

    def button(self, parent: QWidget | None = None) -> QPushButton:
        """An "Import…" button that asks for the file."""
        button = QPushButton("Import…", parent)
        button.setToolTip(
            "Bring in a Koroku JSON export, or ChatGPT's or Claude's data export "
            "(conversations.json or the zip)"
        )
        button.clicked.connect(lambda _c=False: self.choose(button))
        self._button = button
        return button

    def choose(self, parent: QWidget | None) -> asyncio.Future[str] | None:
        """Ask for a file (a static file dialog) and import it; None when none was chosen
        or an import is already running."""
        if self.running is not None and not self.running.done():
            return None
        name, _filter = QFileDialog.getOpenFileName(
            parent, "Import into Koroku", str(Path.home()), FILE_FILTER
        )
        return self.import_from(Path(name)) if name else None

    def import_from(self, path: Path) -> asyncio.Future[str]:
        """Import `path` in a worker; resolves to (and emits) the line shown."""
        self.running = self._tasks.start(self._import(path))
        return self.running

    def cancel(self) -> None:
        """Stop the running import before its next conversation."""
        self._stop.set()
        self.progress.cancel_button.setEnabled(False)
        self.progress.label.setText("Stopping the import…")

    async def _import(self, path: Path) -> str:
        self._stop = stop = threading.Event()
        self.progress.show_step(0, 0, f"Reading {path.name}")
        self.progress.cancel_button.setEnabled(True)
        self.progress.setVisible(True)
        self._enable(False)
        try:
            outcome = await asyncio.to_thread(self.run, path, self._stepped.emit, stop.is_set)
        except ImportCancelled as exc:  # the conversations before it are in, each whole
            line = f"Import stopped: {exc}"
            self.imported.emit()
        except ImportRefused as exc:
            line = f"Import failed: {exc}"
        except Exception as exc:  # the store failed (disk full, locked): one line, no crash
            log.warning("import failed", exc_info=True)
            line = f"Import failed: {exc}"
        else:
            line = first_upper(outcome.line)
            self.imported.emit()
        finally:
            self.progress.setVisible(False)
            self._enable(True)
        self.finished.emit(line)
        return line

    def _enable(self, on: bool) -> None:
        if self._button is not None:
            self._button.setEnabled(on)

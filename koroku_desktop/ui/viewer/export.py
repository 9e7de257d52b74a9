"""Export from the viewer: the `koroku export` formats (Markdown or JSON, whole log or live).

The writer is the same one `koroku export` uses (`runtime.export_file`), handed in by the
composition root; it runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMenu, QPushButton, QWidget

from koroku_desktop.domain.errors import KorokuError

Format = Literal["md", "json"]


class ExportFailed(KorokuError, RuntimeError):
    """`koroku export` failed; the message says why."""


@dataclass(frozen=True)
class ExportChoice:
    """What to export: a format and the whole log or only the live context."""

    fmt: Format
    live: bool

    @property
    def label(self) -> str:
        """The menu text."""
        scope = "The live context" if self.live else "The whole log"
        return f"{scope} as {'Markdown' if self.fmt == 'md' else 'JSON'}…"

    def default_name(self) -> str:
        """A file name to offer."""
        return f"koroku-{'live' if self.live else 'log'}.{self.fmt}"


CHOICES = (
    ExportChoice("md", False),
    ExportChoice("json", False),
    ExportChoice("md", True),
    ExportChoice("json", True),
)


ExportWriter = Callable[[Format, bool, Path], int]
"""Writes an export (format, live only?, path) and returns how many events it wrote."""


def run_export(write: ExportWriter, choice: ExportChoice, output: Path) -> str:
    """Write the export; the sentence to show (raises ExportFailed)."""
    try:
        count = write(choice.fmt, choice.live, output)
    except (OSError, ValueError) as exc:
        raise ExportFailed(str(exc)) from exc
    return f"exported {count:,} event(s) to {output}"


class Exporter(QObject):
    """Asks for a file, runs the export off the event loop and reports the result in words."""

    finished = Signal(str)

    def __init__(self, write: ExportWriter, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.write = write
        self._tasks: set[asyncio.Future[Any]] = set()

    def button(self, parent: QWidget | None = None) -> QPushButton:
        """An "Export…" button with a menu of the four choices."""
        button = QPushButton("Export…", parent)
        menu = QMenu(button)
        for choice in CHOICES:
            action = menu.addAction(choice.label)
            action.triggered.connect(lambda _c=False, ch=choice: self.ask(ch, button))
        button.setMenu(menu)
        return button

    def ask(self, choice: ExportChoice, parent: QWidget | None) -> QFileDialog:
        """Open a save dialog for `choice`; exporting starts when a file is chosen."""
        dialog = QFileDialog(
            parent, "Export Koroku's history", str(Path.home() / choice.default_name())
        )
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter("Markdown (*.md)" if choice.fmt == "md" else "JSON (*.json)")
        dialog.setDefaultSuffix(choice.fmt)
        dialog.fileSelected.connect(lambda name: self.export_to(choice, Path(name)))
        dialog.open()
        return dialog

    def export_to(self, choice: ExportChoice, output: Path) -> asyncio.Future[str]:
        """Export to `output` in a worker; resolves to (and emits) the message shown."""
        task = asyncio.ensure_future(self._export(choice, output))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _export(self, choice: ExportChoice, output: Path) -> str:
        try:
            message = await asyncio.to_thread(run_export, self.write, choice, output)
            message = message[:1].upper() + message[1:]
        except ExportFailed as exc:
            message = f"Export failed: {exc}"
        self.finished.emit(message)
        return message

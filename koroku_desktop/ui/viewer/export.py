"""Export from the viewer: the `koroku export` formats (Markdown or JSON) of every
conversation or of the one the viewer shows (`koroku export -c`), or of a live context.

The writer is the one `koroku export` uses (app/exports.py `export_file`), handed in by the
composition root; it runs in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMenu, QPushButton, QWidget

from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.ui.widgets.tasks import TaskSet

Format = Literal["md", "json"]


class ExportFailed(KorokuError, RuntimeError):
    """`koroku export` failed; the message says why."""


@dataclass(frozen=True)
class ExportTarget:
    """Whose events: one conversation (its id and title) or every one (`conversation` None).
    A live context is always one conversation's: `live_id` names it."""

    conversation: str | None = None
    title: str = ""
    live_id: str = ""


@dataclass(frozen=True)
class ExportChoice:
    """What to export: a format, and the events of the target or only its live context."""

    fmt: Format
    live: bool

    def label(self, target: ExportTarget | None = None) -> str:
        """The menu text for `target`."""
        target = target or ExportTarget()
        what = "Markdown" if self.fmt == "md" else "JSON"
        if self.live:
            return f"The live context as {what}…"
        if target.conversation is None:
            return f"All conversations as {what}…"
        return f"“{_short(target.title)}” as {what}…"

    def default_name(self, target: ExportTarget | None = None) -> str:
        """A file name to offer."""
        target = target or ExportTarget()
        if self.live:
            scope = "live"
        elif target.conversation is None:
            scope = "log"
        else:
            scope = f"conversation-{target.conversation[:8]}"
        return f"koroku-{scope}.{self.fmt}"


def _short(title: str) -> str:
    return title if len(title) <= 40 else title[:39] + "…"


CHOICES = (
    ExportChoice("md", False),
    ExportChoice("json", False),
    ExportChoice("md", True),
    ExportChoice("json", True),
)


ExportWriter = Callable[[Format, bool, Path, "str | None"], int]
"""Writes an export (format, live only?, path, the conversation or None for every one) and
returns how many events it wrote. A live export is of the conversation given."""


def run_export(
    write: ExportWriter, choice: ExportChoice, output: Path, target: ExportTarget
) -> str:
    """Write the export; the sentence to show (raises ExportFailed)."""
    chosen = target.live_id if choice.live else target.conversation
    try:
        count = write(choice.fmt, choice.live, output, chosen)
    except (OSError, ValueError) as exc:
        raise ExportFailed(str(exc)) from exc
    return f"exported {count:,} event(s) to {output}"


class Exporter(QObject):
    """Asks for a file, runs the export off the event loop and reports the result in words."""

    finished = Signal(str)

    def __init__(
        self,
        write: ExportWriter,
        target: Callable[[], ExportTarget],
        parent: QObject | None = None,
    ) -> None:
        """`target` says what the viewer shows now (what an export is of)."""
        super().__init__(parent)
        self.write = write
        self.target = target
        self._tasks = TaskSet()

    def button(self, parent: QWidget | None = None) -> QPushButton:
        """An "Export…" button with a menu of the four choices, named for what is shown."""
        button = QPushButton("Export…", parent)
        menu = QMenu(button)
        actions = []
        for choice in CHOICES:
            action = menu.addAction(choice.label())
            action.triggered.connect(lambda _c=False, ch=choice: self.ask(ch, button))
            actions.append((action, choice))

        def name_actions() -> None:
            target = self.target()
            for action, choice in actions:
                action.setText(choice.label(target))

        menu.aboutToShow.connect(name_actions)
        button.setMenu(menu)
        return button

    def ask(self, choice: ExportChoice, parent: QWidget | None) -> QFileDialog:
        """Open a save dialog for `choice` of what is shown now; exporting starts when a file
        is chosen."""
        target = self.target()
        dialog = QFileDialog(
            parent, "Export Koroku's history", str(Path.home() / choice.default_name(target))
        )
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter("Markdown (*.md)" if choice.fmt == "md" else "JSON (*.json)")
        dialog.setDefaultSuffix(choice.fmt)
        dialog.fileSelected.connect(lambda name: self.export_to(choice, Path(name), target))
        dialog.open()
        return dialog

    def export_to(
        self, choice: ExportChoice, output: Path, target: ExportTarget | None = None
    ) -> asyncio.Future[str]:
        """Export `target` (default: what is shown now) to `output` in a worker; resolves to
        (and emits) the message shown."""
        return self._tasks.start(self._export(choice, output, target or self.target()))

    async def _export(self, choice: ExportChoice, output: Path, target: ExportTarget) -> str:
        try:
            message = await asyncio.to_thread(run_export, self.write, choice, output, target)
            message = message[:1].upper() + message[1:]
        except ExportFailed as exc:
            message = f"Export failed: {exc}"
        self.finished.emit(message)
        return message

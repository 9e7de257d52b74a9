"""Export from the viewer: the `koroku export` formats (Markdown or JSON, whole log or live).

The export runs the `koroku export` command itself in a child process, so the files are the
command's, byte for byte, and the writer never runs on the event loop. (The Markdown writer
lives in the CLI package, which the UI may not import; see the report of issue 5.)
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMenu, QPushButton, QWidget

Format = Literal["md", "json"]
TIMEOUT_S = 600


class ExportFailed(RuntimeError):
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


def export_command(choice: ExportChoice, output: Path) -> list[str]:
    """The `koroku export` command line for a choice (the frozen app is `koroku` itself)."""
    base = (
        [sys.executable]
        if getattr(sys, "frozen", False)
        else [sys.executable, "-m", "koroku_desktop"]
    )
    args = [*base, "export", "--format", choice.fmt, "-o", str(output)]
    return [*args, "--live"] if choice.live else args


def run_export(home: Path, choice: ExportChoice, output: Path) -> str:
    """Run `koroku export` on the data dir `home`; its report line (raises ExportFailed)."""
    env = {**os.environ, "KOROKU_HOME": str(home)}
    try:
        done = subprocess.run(
            export_command(choice, output),
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ExportFailed(f"the export could not run: {exc}") from exc
    message = (done.stderr or done.stdout).strip().splitlines()
    if done.returncode != 0:
        raise ExportFailed(message[-1] if message else f"exit code {done.returncode}")
    return message[-1] if message else f"exported to {output}"


class Exporter(QObject):
    """Asks for a file, runs the export off the event loop and reports the result in words."""

    finished = Signal(str)

    def __init__(self, home: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.home = home
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
            message = await asyncio.to_thread(run_export, self.home, choice, output)
            message = message[:1].upper() + message[1:]
        except ExportFailed as exc:
            message = f"Export failed: {exc}"
        self.finished.emit(message)
        return message

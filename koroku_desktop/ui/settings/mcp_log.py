"""A server's log in Settings: its stderr, the SDK's records and its log notifications."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.ui.widgets.controls import note_label

TAIL_BYTES = 200_000
"""How much of the end of the log the dialog shows."""


def log_tail(path: Path | None, limit: int = TAIL_BYTES) -> str:
    """The last `limit` bytes of the log as text, or a line saying there is none yet."""
    if path is None:
        return "This server has no log."
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            data = fh.read()
    except FileNotFoundError:
        return "Nothing logged yet."
    except OSError as exc:
        return f"The log cannot be read: {exc}"
    text = data.decode("utf-8", "replace")
    if size > limit:
        text = text.split("\n", 1)[-1]  # start at a whole line
    return text or "Nothing logged yet."


class ServerLogDialog(QDialog):
    """The end of `logs/mcp-<name>.log`, read-only, with Reload (opened with `open()`)."""

    def __init__(self, name: str, path: Path | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Log of MCP server {name}")
        self.path = path
        self.resize(760, 480)
        col = QVBoxLayout(self)
        where = note_label(str(path) if path else "")
        col.addWidget(where)
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        col.addWidget(self.view)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.reload_button = QPushButton("Reload")
        buttons.addButton(self.reload_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.reload_button.clicked.connect(self.reload)
        buttons.rejected.connect(self.reject)
        col.addWidget(buttons)
        self.reload()

    def reload(self) -> None:
        """Read the log again and show its end."""
        self.view.setPlainText(log_tail(self.path))
        bar = self.view.verticalScrollBar()
        bar.setValue(bar.maximum())

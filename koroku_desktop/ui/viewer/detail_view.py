"""EntryDetail: one log entry, readable (Markdown) or as its raw JSON."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QStackedWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.domain.events import LogEntry
from koroku_desktop.render.text import when
from koroku_desktop.ui.viewer import event_render


class EntryDetail(QWidget):
    """Shows the selected entry; a toggle switches to the raw JSON of the row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry: LogEntry | None = None
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 4, 0, 0)
        col.setSpacing(4)
        bar = QHBoxLayout()
        self.title = QLabel("Select an event to see it in full.")
        self.title.setObjectName("Muted")
        bar.addWidget(self.title, 1)
        self.raw_button = QToolButton()
        self.raw_button.setText("Raw JSON")
        self.raw_button.setCheckable(True)
        self.raw_button.toggled.connect(self._show_raw)
        bar.addWidget(self.raw_button)
        self.copy_button = QToolButton()
        self.copy_button.setText("Copy")
        self.copy_button.clicked.connect(self._copy)
        bar.addWidget(self.copy_button)
        col.addLayout(bar)
        self.stack = QStackedWidget()
        self.readable = QTextBrowser()
        self.readable.setOpenExternalLinks(True)
        self.raw = QPlainTextEdit()
        self.raw.setObjectName("Code")
        self.raw.setReadOnly(True)
        self.raw.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.stack.addWidget(self.readable)
        self.stack.addWidget(self.raw)
        col.addWidget(self.stack, 1)

    def show_entry(self, entry: LogEntry | None) -> None:
        """Show `entry` (None: nothing selected)."""
        self.entry = entry
        if entry is None:
            self.title.setText("Select an event to see it in full.")
            self.readable.clear()
            self.raw.clear()
            return
        self.title.setText(
            f"#{entry.seq} · {event_render.kind_label(entry)} · "
            f"{when(entry.created_at)} · conversation {entry.conversation_id}"
        )
        self.readable.setMarkdown(event_render.readable(entry))
        self.raw.setPlainText(event_render.raw_json(entry))

    def _show_raw(self, raw: bool) -> None:
        self.stack.setCurrentIndex(1 if raw else 0)

    def _copy(self) -> None:
        widget = self.raw if self.raw_button.isChecked() else self.readable
        QApplication.clipboard().setText(widget.toPlainText())

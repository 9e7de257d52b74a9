"""EntryDetail: one log entry, readable (Markdown) or as its raw JSON."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QTextDocument
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QPlainTextEdit,
    QStackedWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.domain.events import LogEntry, MessageEvent, StoredEvent
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.render.text import when
from koroku_desktop.ui.chat.attachment_rows import THUMBNAILS, attachment_part
from koroku_desktop.ui.viewer import event_render
from koroku_desktop.ui.widgets.controls import note_label


class AttachmentBrowser(QTextBrowser):
    """A text browser that shows `attachment:<sha256>` images as thumbnails from the blob
    store, and opens a private copy of an attached file when its link is clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._clicked)
        self.open_url = QDesktopServices.openUrl
        """Opens a link or a copy of an attached file (tests record the URL instead)."""
        self.parts: dict[str, dict[str, Any]] = {}
        """The attachments of the shown entry, by SHA-256 (for their names when opened)."""

    def loadResource(self, kind: int, name: QUrl | str) -> Any:
        """An attached image's thumbnail for `attachment:` URLs."""
        url = QUrl(name)
        if url.scheme() == "attachment" and kind == QTextDocument.ResourceType.ImageResource:
            thumb = THUMBNAILS.pixmap(url.path())
            return thumb.toImage() if thumb is not None else None
        return super().loadResource(kind, name)

    def _clicked(self, url: QUrl) -> None:
        if url.scheme() != "attachment":
            self.open_url(url)
            return
        store = THUMBNAILS.store
        args = self.parts.get(url.path(), {"sha256": url.path()})
        if store is None:
            self.setToolTip("That file cannot be opened: no attachment store")
            return
        try:
            path = store.open_copy(attachment_part(args))
        except (LookupError, OSError, ValueError) as exc:
            self.setToolTip(f"That file cannot be opened: {exc}")
            return
        self.open_url(QUrl.fromLocalFile(str(path)))


class EntryDetail(QWidget):
    """Shows the selected entry; a toggle switches to the raw JSON of the row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry: LogEntry | None = None
        self.titles: dict[str, str] = {}
        """Each conversation's title, by id (the timeline sets it from the registry)."""
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 4, 0, 0)
        col.setSpacing(4)
        bar = QHBoxLayout()
        # word-wrapped: a long title never widens the window
        self.title = note_label("Select an event to see it in full.")
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
        self.readable = AttachmentBrowser()
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
        cid = entry.conversation_id
        title = self.titles.get(cid)
        where = f"“{title}” ({cid[:8]})" if title else f"conversation {cid}"
        self.title.setText(
            f"#{entry.seq} · {event_render.kind_label(entry)} · {when(entry.created_at)} · {where}"
        )
        self.title.setToolTip(f"Conversation {cid}")
        self.readable.parts = attachment_args(entry)
        self.readable.setMarkdown(event_render.readable(entry, event_render.attachment_url))
        self.raw.setPlainText(event_render.raw_json(entry))

    def _show_raw(self, raw: bool) -> None:
        self.stack.setCurrentIndex(1 if raw else 0)

    def _copy(self) -> None:
        widget = self.raw if self.raw_button.isChecked() else self.readable
        QApplication.clipboard().setText(widget.toPlainText())


def attachment_args(entry: LogEntry) -> dict[str, dict[str, Any]]:
    """The attachments of an entry's message, by SHA-256 (name, type and size)."""
    if not isinstance(entry, StoredEvent) or not isinstance(entry.event, MessageEvent):
        return {}
    return {p.sha256: p.model_dump() for p in entry.event.parts if isinstance(p, AttachmentPart)}

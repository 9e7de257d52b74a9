"""AttachmentDrops: what the chat window and the quick-ask popup share about attaching files.

A mixin for a top-level widget that has an `AttachmentTray` (`tray`), a `ChatInput`
(`input`) and a `show_hint(text)`: files dropped anywhere on it, images or files pasted into
its message box and the attach button's dialog all become chips in the tray, and
`attach_bytes` lets the app hand it a screenshot.
"""

from __future__ import annotations

from PySide6.QtGui import (
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
    QShortcut,
)
from PySide6.QtWidgets import QFileDialog, QWidget

from koroku_desktop.ui.widgets.attachment_tray import (
    AttachmentTray,
    Dropped,
    mime_attachments,
)
from koroku_desktop.ui.widgets.chat_input import ChatInput


class AttachmentDrops:
    """Drag and drop, paste and the attach button, into `self.tray` (mixed into a QWidget)."""

    tray: AttachmentTray
    input: ChatInput

    def show_hint(self, text: str) -> None:
        """Say why a file was not attached (the widget's own notice line)."""
        raise NotImplementedError

    def wire_attachments(self, widget: QWidget) -> None:
        """Connect the tray and the message box; accept drops on `widget` (the window)."""
        widget.setAcceptDrops(True)
        # Ctrl+V with the focus elsewhere (the conversation): paste into the message box.
        paste = QShortcut(QKeySequence(QKeySequence.StandardKey.Paste), widget)
        paste.activated.connect(self._paste_into_input)
        self.tray.refused.connect(self.show_hint)
        self.tray.changed.connect(self._tray_changed)
        self.input.media_inserted.connect(self._media_inserted)

    def _paste_into_input(self) -> None:
        self.input.setFocus()
        mime = QGuiApplication.clipboard().mimeData()
        if mime is not None and mime_attachments(mime):
            self.tray.add_dropped(mime_attachments(mime))
        else:
            self.input.paste()

    def _tray_changed(self) -> None:
        self.input.allow_empty_submit = bool(self.tray.chips)

    def _media_inserted(self, items: list[Dropped]) -> None:
        self.tray.add_dropped(items)

    def attach_bytes(self, data: bytes, name: str) -> None:
        """Add bytes (a screenshot) as a pending attachment chip, checked like any file."""
        self.tray.add_bytes(data, name)

    def choose_files(self) -> QFileDialog:
        """The attach button: a file dialog whose choice becomes chips (returned, not blocking)."""
        assert isinstance(self, QWidget)
        return self.tray.choose_files(self)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Files and images may be dropped anywhere on the window."""
        if mime_attachments(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        """Keep accepting while the drag moves over the window."""
        if mime_attachments(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        """Dropped files become chips."""
        items = mime_attachments(event.mimeData())
        if items:
            self.tray.add_dropped(items)
            event.acceptProposedAction()

"""ChatInput: the message box. Enter sends, Shift+Enter adds a line, Up recalls the last one."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QPlainTextEdit, QWidget

from koroku_desktop.ui.widgets.attachment_tray import mime_attachments
from koroku_desktop.ui.widgets.text_fit import fitting_height

MAX_LINES = 8


class ChatInput(QPlainTextEdit):
    """A growing plain-text box that emits `submitted(text)` on Enter."""

    submitted = Signal(str)
    escape_pressed = Signal()
    media_inserted = Signal(list)  # files or an image pasted or dropped (see mime_attachments)

    def __init__(self, placeholder: str = "Ask Koroku…", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Input")
        self.setPlaceholderText(placeholder)
        self.setTabChangesFocus(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.placeholders = (placeholder, placeholder)
        """The placeholder, and the short one for a box too narrow for it."""
        self.history: list[str] = []
        self.allow_empty_submit = False
        """Enter sends with no text (files are attached)."""
        self.document().contentsChanged.connect(self.updateGeometry)
        self.document().contentsChanged.connect(self._resize)
        self._resize()

    def _resize(self) -> None:
        height, full = fitting_height(self, MAX_LINES)
        self.setFixedHeight(height)
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAsNeeded if full else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )

    def sizeHint(self) -> QSize:
        """One line tall, growing with the text up to MAX_LINES."""
        return QSize(300, self.height())

    def event(self, event: QEvent) -> bool:
        """Re-fit once the style sheet (its padding) or the width is known."""
        handled = super().event(event)
        if event.type() == QEvent.Type.Resize:
            self._pick_placeholder()
        if event.type() in (
            QEvent.Type.Polish,
            QEvent.Type.StyleChange,
            QEvent.Type.Show,
            QEvent.Type.Resize,
        ):
            self._resize()
        return handled

    def set_placeholders(self, full: str, short: str) -> None:
        """Show `full` while it fits on the box's one line, else `short`."""
        self.placeholders = (full, short)
        self._pick_placeholder()

    def _pick_placeholder(self) -> None:
        full, short = self.placeholders
        room = self.viewport().width() - 2 * self.document().documentMargin()
        fits = self.fontMetrics().horizontalAdvance(full) <= room
        text = full if fits else short
        if self.placeholderText() != text:
            self.setPlaceholderText(text)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter sends, Shift+Enter is a newline, Up on an empty box recalls the last message."""
        key = event.key()
        mods = event.modifiers()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            mods & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier)
        ):
            self.submit()
            return
        if key == Qt.Key.Key_Up and not self.toPlainText() and self.history:
            self.setPlainText(self.history[-1])
            self.moveCursor(self.textCursor().MoveOperation.End)
            return
        if key == Qt.Key.Key_Escape:
            self.escape_pressed.emit()
        super().keyPressEvent(event)

    def submit(self) -> None:
        """Emit the text (if any) and empty the box."""
        text = self.toPlainText().strip()
        if not text:
            if self.allow_empty_submit:
                self.submitted.emit("")
            return
        self.history.append(text)
        self.clear()
        self.submitted.emit(text)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        """Images and files may be pasted or dropped (they become attachments)."""
        return bool(mime_attachments(source)) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        """A pasted or dropped image or file is attached, not inserted as text."""
        media = mime_attachments(source)
        if media:
            self.media_inserted.emit(media)
            return
        super().insertFromMimeData(source)

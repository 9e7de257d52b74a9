"""Composer: the framed box at the bottom of the chat window — the attachment chips, the
paper clip, the message box, the model picker and the Send and Stop buttons. It only builds
and lays them out; the chat window connects them to what they do (send, attach, cancel)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from koroku_desktop.ui.chat.model_picker import ModelPicker
from koroku_desktop.ui.widgets.attachment_tray import AttachmentTray, attach_button
from koroku_desktop.ui.widgets.chat_input import ChatInput

PLACEHOLDER = "Message Koroku — Enter sends, Shift+Enter adds a line"
SHORT_PLACEHOLDER = "Message Koroku"
"""The placeholder of a box too narrow for the long one."""
MIN_INPUT_WIDTH = 160
"""The message box keeps at least this much beside the model picker, else the picker goes
(the status bar names the model)."""


class Composer(QFrame):
    """The message box with its attachment tray and buttons (styled as `#Composer`)."""

    def __init__(self, model: str = "") -> None:
        super().__init__()
        self.setObjectName("Composer")
        col = QVBoxLayout(self)
        col.setContentsMargins(8, 8, 8, 8)
        col.setSpacing(6)
        self.tray = AttachmentTray()
        col.addWidget(self.tray)
        row = QHBoxLayout()
        row.setSpacing(8)
        col.addLayout(row)
        self._col = col
        self._row = row
        self.attach_button = attach_button()
        row.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignBottom)
        self.input = ChatInput(PLACEHOLDER)
        self.input.set_placeholders(PLACEHOLDER, SHORT_PLACEHOLDER)
        row.addWidget(self.input, 1)
        self.model_picker = ModelPicker(model)
        row.addWidget(self.model_picker, 0, Qt.AlignmentFlag.AlignBottom)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("Send")
        self.send_button.clicked.connect(self.input.submit)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("Stop")
        self.stop_button.setVisible(False)
        for b in (self.stop_button, self.send_button):
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            row.addWidget(b, 0, Qt.AlignmentFlag.AlignBottom)

    def add_above_input(self, widget: QWidget) -> None:
        """Put `widget` between the chips and the message box (the slash-command list)."""
        self._col.insertWidget(self._col.count() - 1, widget)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A narrow box leaves the model to the status bar, whether the window is narrow or
        the sidebar takes the room (the box shows the short placeholder whenever the long
        one would not fit)."""
        super().resizeEvent(event)
        self._fit_picker()

    def _fit_picker(self) -> None:
        """The picker is shown while the message box keeps `MIN_INPUT_WIDTH` beside it, Stop
        counted as shown (so it does not come and go as turns start and end)."""
        margins = self.contentsMargins().left() + self.contentsMargins().right()
        margins += self._col.contentsMargins().left() + self._col.contentsMargins().right()
        fixed = (self.attach_button, self.model_picker, self.stop_button, self.send_button)
        taken = sum(w.sizeHint().width() + self._row.spacing() for w in fixed)
        room = self.width() - margins - taken
        self.model_picker.setVisible(room >= MIN_INPUT_WIDTH)

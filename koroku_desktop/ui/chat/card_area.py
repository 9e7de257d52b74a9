"""CardArea: the cards between the chat header and the conversation (first-run setup, welcome).

Their wrapped paragraphs get the height they need at the window's width; when that is more
than the window has left (a 400 px window, both cards) the area scrolls instead of squeezing
every paragraph to its first line.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QScrollArea, QVBoxLayout, QWidget

from koroku_desktop.ui.chat.row_painting import MAX_COLUMN

MIN_ROOM = 160
"""The cards get at least this much height, however small the window."""


class CardArea(QScrollArea):
    """A vertical stack of cards, as tall as they need up to the room the window
    leaves them (`room()`), then scrolled."""

    def __init__(self, room: Callable[[], int], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._room = room
        self.setObjectName("CardArea")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.box = QWidget()
        self.box.setObjectName("CardBox")
        centred = QHBoxLayout(self.box)  # the cards line up with the conversation's column
        centred.setContentsMargins(20, 6, 20, 6)
        column = QWidget()
        column.setMaximumWidth(MAX_COLUMN)
        self.stack = QVBoxLayout(column)
        self.stack.setContentsMargins(0, 0, 0, 0)
        self.stack.setSpacing(10)
        centred.addStretch(1)
        centred.addWidget(column, 100)
        centred.addStretch(1)
        self.setWidget(self.box)
        self.box.installEventFilter(self)
        self.setVisible(False)
        self._fit_soon = QTimer(self)
        self._fit_soon.setSingleShot(True)
        self._fit_soon.setInterval(0)
        self._fit_soon.timeout.connect(self.fit)
        self._followed: QWidget | None = None

    def follow_size_of(self, widget: QWidget) -> None:
        """Re-fit whenever `widget` changes size: what the window leaves the cards shrinks
        when the composer's column grows (an attachment chip, an approval, a notice)."""
        widget.installEventFilter(self)
        self._followed = widget

    def add(self, card: QWidget) -> None:
        """Show `card` below the others."""
        self.stack.addWidget(card)
        card.destroyed.connect(self._fit_soon.start)
        self.setVisible(True)
        self.fit()

    def count(self) -> int:
        """How many cards are shown."""
        return sum(
            1
            for i in range(self.stack.count())
            if (item := self.stack.itemAt(i)) is not None
            and (w := item.widget()) is not None
            and not w.isHidden()
        )

    def fit(self) -> None:
        """Take the height the cards need at this width, up to the room left for them."""
        self.setVisible(self.count() > 0)
        if not self.count():
            return
        width = self.viewport().width() if self.isVisible() else self.window().width()
        need = self.box.heightForWidth(max(1, width))
        if need < 0:
            need = self.box.sizeHint().height()
        self.setFixedHeight(min(need, max(MIN_ROOM, self._room())))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Re-fit when a card's content, the width or the followed widget's size changes."""
        kinds = (QEvent.Type.LayoutRequest, QEvent.Type.Resize)
        if event.type() in kinds and (watched is self.box or watched is self._followed):
            self._fit_soon.start()
        return False

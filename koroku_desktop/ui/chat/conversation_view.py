"""ConversationView: a QListView over MessageModel that sticks to the bottom while streaming."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QFrame, QListView, QWidget

from koroku_desktop.ui.chat.message_delegate import MessageDelegate
from koroku_desktop.ui.chat.message_model import MessageModel


class ConversationView(QListView):
    """Virtualised conversation: one delegate paints every row; no widget per message."""

    older_requested = Signal(int)  # the oldest loaded seq
    copied = Signal(str)
    action_requested = Signal(str)  # `retry` from a failure's notice

    def __init__(self, model: MessageModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Conversation")
        self.setModel(model)
        self._model = model
        self.delegate = MessageDelegate(self)
        self.setItemDelegate(self.delegate)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setUniformItemSizes(False)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Always there (slim and transparent): row widths never flip, cached heights hold.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setMouseTracking(True)
        self.verticalScrollBar().setSingleStep(24)
        self._stick = True
        self._anchor_from_bottom: int | None = None
        self._older_pending = False
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range)
        self.delegate.toggle_requested.connect(model.toggle_expanded)
        self.delegate.run_toggle_requested.connect(model.toggle_run)
        self.delegate.copy_requested.connect(self.copied)
        self.delegate.action_requested.connect(self.action_requested)
        model.show_thoughts_changed.connect(self._thoughts_toggled)
        self._width = 0
        self._relayout = QTimer(self)
        self._relayout.setSingleShot(True)
        self._relayout.setInterval(60)
        self._relayout.timeout.connect(self.scheduleDelayedItemsLayout)

    def _thoughts_toggled(self, show: bool) -> None:
        self.delegate.show_thoughts = show
        self.scheduleDelayedItemsLayout()

    def _on_scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._stick = value >= bar.maximum() - 8
        if value <= bar.minimum() and bar.maximum() > 0 and not self._older_pending:
            oldest = self._model.oldest_seq
            if self._model.held:
                self._older_pending = True
                QTimer.singleShot(0, self.show_held)
            elif oldest is not None and oldest > 1:
                self._older_pending = True
                self.older_requested.emit(oldest)

    def _on_range(self, _low: int, high: int) -> None:
        bar = self.verticalScrollBar()
        if self._anchor_from_bottom is not None:
            bar.setValue(high - self._anchor_from_bottom)
            self._anchor_from_bottom = None
        elif self._stick:
            bar.setValue(high)

    def show_held(self, down_to_seq: int | None = None) -> None:
        """Give rows to older entries the model holds (a page, or all from `down_to_seq`),
        keeping what is shown in place; when none gives a row, ask the log for older ones."""
        model = self._model
        if down_to_seq is not None:
            first = next((i.seq for i in model.items() if i.seq is not None), None)
            if first is not None and down_to_seq >= first:
                return
        self.prepare_prepend()
        added = model.prepend_held(down_to_seq=down_to_seq) if model.held else 0
        while not added and model.held:
            added = model.prepend_held()
        if added or down_to_seq is not None:
            self.older_loaded(added or 1)
        elif model.oldest_seq is not None and model.oldest_seq > 1:
            self.older_requested.emit(model.oldest_seq)
        else:
            self.older_loaded(0)

    def older_loaded(self, added: int) -> None:
        """Older rows were prepended (none: the beginning is reached, stop asking)."""
        self._older_pending = added == 0
        if added == 0:
            self._anchor_from_bottom = None

    def prepare_prepend(self) -> None:
        """Call before prepending rows so the visible content stays put."""
        bar = self.verticalScrollBar()
        self._anchor_from_bottom = bar.maximum() - bar.value()

    def scroll_to_bottom(self) -> None:
        """Jump to the newest message and follow new ones."""
        self._stick = True
        self.scrollToBottom()
        QTimer.singleShot(0, self.scrollToBottom)

    def scroll_to_row(self, row: int) -> None:
        """Show `row` at the top of the view."""
        if 0 <= row < self._model.rowCount():
            self._stick = False
            index = self._model.index(row)
            self.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtTop)
            QTimer.singleShot(
                0, lambda: self.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtTop)
            )

    def scroll_to_match(self, row: int) -> None:
        """Show `row` (a Find match) in the middle of the view; new rows no longer pull the
        view down while the person reads it."""
        if 0 <= row < self._model.rowCount():
            self._stick = False
            self.scrollTo(self._model.index(row), QAbstractItemView.ScrollHint.PositionAtCenter)

    def changeEvent(self, event: QEvent) -> None:
        """A new font: the delegate measures rows with it."""
        if event.type() == QEvent.Type.FontChange:
            self.delegate.font_changed()
            self.scheduleDelayedItemsLayout()
        super().changeEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Re-measure rows when the width changes."""
        super().resizeEvent(event)
        if event.size().width() != self._width:
            self._width = event.size().width()
            self._relayout.start()

    def rowsInserted(
        self, parent: QModelIndex | QPersistentModelIndex, start: int, end: int
    ) -> None:
        """Follow new rows when the view is at the bottom."""
        super().rowsInserted(parent, start, end)
        if self._stick:
            QTimer.singleShot(0, self, self._follow)

    def _follow(self) -> None:
        if self._stick:
            self.scrollToBottom()

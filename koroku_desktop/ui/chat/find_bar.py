"""FindBar: Ctrl+F in the conversation — a field, "2 of 5", previous and next, and every
occurrence highlighted in the rows (the delegate paints them); Esc closes it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from koroku_desktop.ui.chat.conversation_view import ConversationView
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.widgets.controls import search_field, single_shot


class _FindField(QLineEdit):
    """The query field: Enter finds the next match, Shift+Enter the previous, Esc closes."""

    step = Signal(int)
    closed = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter / Shift+Enter / Esc."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            back = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self.step.emit(-1 if back else 1)
            return
        if event.key() == Qt.Key.Key_Escape:
            self.closed.emit()
            return
        super().keyPressEvent(event)


class FindBar(QFrame):
    """Finds text in the loaded conversation's rows and scrolls to each match in turn."""

    closed = Signal()

    def __init__(self, view: ConversationView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("FindBar")
        self._view = view
        model = view.model()
        assert isinstance(model, MessageModel)
        self._model = model
        self.rows: list[int] = []
        """The rows holding the text, in order."""
        self.current = -1
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        self.field = search_field(
            _FindField(), "FindField", "Find in the conversation", self._search_soon
        )
        self.field.step.connect(self.step)
        self.field.closed.connect(self.close_bar)
        row.addWidget(self.field, 1)
        self.count_label = QLabel("")
        self.count_label.setObjectName("Muted")
        row.addWidget(self.count_label)
        self.previous_button = self._button("↑", "Previous match (Shift+Enter)", -1)
        self.next_button = self._button("↓", "Next match (Enter)", 1)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        close.clicked.connect(self.close_bar)
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        row.addWidget(close)
        self._timer = single_shot(self, 120, self.search)
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            signal.connect(self._search_if_open)
        self.setVisible(False)

    def _button(self, text: str, tip: str, direction: int) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(lambda: self.step(direction))
        return button

    def open(self) -> None:
        """Show the bar with the field focused and its text selected."""
        self.setVisible(True)
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()
        self.search()

    def close_bar(self) -> None:
        """Hide the bar and the highlights; the message box gets the keys back."""
        self.setVisible(False)
        self._paint("", -1)
        self.closed.emit()

    def _search_soon(self) -> None:
        self._timer.start()

    def _search_if_open(self, *_args: object) -> None:
        if self.isVisible():
            self._timer.start()

    def search(self) -> None:
        """Find the rows with the text (case-insensitive) and go to the newest match."""
        query = self.field.text().strip()
        needle = query.casefold()
        self.rows = (
            [r for r, item in enumerate(self._model.items()) if needle in item.text.casefold()]
            if needle
            else []
        )
        self.current = len(self.rows) - 1 if self.rows else -1
        self._show(query)

    def step(self, direction: int) -> None:
        """Go to the next (1) or previous (-1) match, wrapping around."""
        if not self.rows:
            self.search()
            return
        self.current = (self.current + direction) % len(self.rows)
        self._show(self.field.text().strip())

    def _show(self, query: str) -> None:
        if not query:
            self.count_label.setText("")
        elif not self.rows:
            self.count_label.setText("No match")
        else:
            self.count_label.setText(f"{self.current + 1} of {len(self.rows)}")
        row = self.rows[self.current] if self.rows else -1
        self._paint(query, row)
        if row >= 0:
            self._view.scroll_to_match(row)

    def _paint(self, query: str, row: int) -> None:
        delegate = self._view.delegate
        delegate.find_text, delegate.find_row = query, row
        self._view.viewport().update()

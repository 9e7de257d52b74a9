"""ButtonRow: a row of buttons, left-aligned at their natural widths, that wraps to as many
rows as it needs when narrow — so a section with many buttons never makes Settings scroll
sideways at 400 px."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QGridLayout, QWidget

from koroku_desktop.ui.widgets.controls import place_buttons


class ButtonRow(QWidget):
    """`buttons` in order, in as few rows as fit the width; its minimum width is that of
    the buttons two to a row (one, for a single button), whatever they show now."""

    def __init__(self, buttons: Sequence[QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.buttons = list(buttons)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.per_row = 0
        self._arrange(len(self.buttons))

    def _width(self, per_row: int) -> int:
        """The width the buttons take `per_row` to a row (each column its widest button)."""
        columns = [0] * per_row
        for i, button in enumerate(self.buttons):
            columns[i % per_row] = max(columns[i % per_row], button.sizeHint().width())
        return sum(columns) + self.grid.horizontalSpacing() * (per_row - 1)

    def fitting(self, room: int) -> int:
        """How many buttons to put in a row in `room` pixels: the fewest rows that fit, the
        buttons shared evenly between them (five as three and two, not four and one)."""
        count = len(self.buttons)
        most = next((n for n in range(count, 1, -1) if self._width(n) <= room), 1)
        rows = -(-count // most)
        return -(-count // rows)

    def minimumSizeHint(self) -> QSize:
        """Narrow enough for two to a row, so that it never holds its section wide."""
        hint = super().minimumSizeHint()
        return QSize(self._width(min(2, len(self.buttons))), hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Lay the buttons out again for the new width."""
        super().resizeEvent(event)
        self._arrange(self.fitting(event.size().width()))

    def _arrange(self, per_row: int) -> None:
        if per_row == self.per_row:
            return
        self.per_row = per_row
        place_buttons(self.grid, self.buttons, per_row)
        self.grid.setColumnStretch(per_row, 1)  # the room left over, at the right

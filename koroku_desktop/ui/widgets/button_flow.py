"""ButtonFlow: a layout of buttons, in order, in as few rows as its width allows.

Its height follows its width (heightForWidth), so every layout around it gives each row the
room it needs; its minimum width is its widest button, never the one row it shows when wide
(a row of four buttons must not hold a window at 500 px). A window that asks only for
minimum sizes (a top-level without a minimum of its own) still gets the rows shown now: the
minimum height is that of the rows at the width last laid out.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QStyle, QWidget


class ButtonFlow(QLayout):
    """`buttons` at their natural widths in one row when they fit, with `last_apart` the last
    one at the right edge (Deny); else wrapped into rows that each fill the width. Mirrored
    in a right-to-left widget."""

    def __init__(
        self, buttons: Sequence[QWidget], spacing: int = 6, *, last_apart: bool = False
    ) -> None:
        super().__init__()
        self._items: list[QLayoutItem] = []
        self.last_apart = last_apart
        self._laid_width = -1
        self._laid_rows = 0
        self.setContentsMargins(0, 0, 0, 0)
        self.setSpacing(spacing)
        for button in buttons:
            self.addWidget(button)

    # -- QLayout's item list -----------------------------------------------------------

    def addItem(self, item: QLayoutItem) -> None:
        """Keep `item` (addWidget wraps a widget in one)."""
        self._items.append(item)

    def count(self) -> int:
        """How many items, hidden buttons included."""
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        """The item at `index`, or None."""
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        """Remove and return the item at `index`, or None."""
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    # -- sizes ------------------------------------------------------------------------

    def expandingDirections(self) -> Qt.Orientation:
        """Never asks for more room than its rows."""
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        """Its height depends on its width (the rows)."""
        return True

    def heightForWidth(self, width: int) -> int:
        """The height of the rows the buttons take at `width`."""
        margins = self.contentsMargins()
        rows = self.rows(width - margins.left() - margins.right())
        return self._rows_height(rows) + margins.top() + margins.bottom()

    def sizeHint(self) -> QSize:
        """As wide as all the buttons in one row; as tall as the rows shown now."""
        shown = self._shown()
        margins = self.contentsMargins()
        width = sum(i.sizeHint().width() for i in shown) + self.spacing() * max(0, len(shown) - 1)
        return QSize(width + margins.left() + margins.right(), self.minimumSize().height())

    def minimumSize(self) -> QSize:
        """As wide as the widest button; as tall as the rows at the width last laid out."""
        shown = self._shown()
        margins = self.contentsMargins()
        widest = max((i.sizeHint().width() for i in shown), default=0)
        if self._laid_width > 0:
            height = self.heightForWidth(self._laid_width)
        else:
            height = self._rows_height([shown]) + margins.top() + margins.bottom()
        return QSize(widest + margins.left() + margins.right(), height)

    # -- placing ----------------------------------------------------------------------

    def rows(self, width: int) -> list[list[QLayoutItem]]:
        """The shown buttons in rows at `width` (inside the margins): as many in each row
        as fit, one row at least (the widest button's width is the minimum)."""
        shown = self._shown()
        gap = self.spacing()
        if self.last_apart and len(shown) > 1:  # one row only with a gap before the last
            one_row = sum(i.sizeHint().width() for i in shown) + gap * len(shown)
            if one_row <= width:
                return [shown]
        rows: list[list[QLayoutItem]] = []
        used = 0
        for item in shown:
            wide = item.sizeHint().width()
            if rows and used + gap + wide <= width:
                rows[-1].append(item)
                used += gap + wide
            else:
                rows.append([item])
                used = wide
        return rows

    def setGeometry(self, rect: QRect) -> None:
        """Place the buttons in their rows within `rect`."""
        super().setGeometry(rect)
        area = rect.marginsRemoved(self.contentsMargins())
        rows = self.rows(area.width())
        changed = len(rows) != self._laid_rows
        self._laid_width, self._laid_rows = rect.width(), len(rows)
        y = area.y()
        for row in rows:
            height = self._rows_height([row])
            if len(rows) == 1:
                self._place_one_row(row, area.x(), area.right(), y, height)
            else:
                self._place_filling(row, area.x(), area.width(), y, height)
            y += height + self.spacing()
        parent = self.parentWidget()
        if parent is not None and parent.isRightToLeft():  # as the box layouts around it
            for item in self._shown():
                item.setGeometry(QStyle.visualRect(parent.layoutDirection(), area, item.geometry()))
        if changed:
            self.invalidate()  # the minimum height changed: the widgets around re-lay out

    def _place_one_row(self, row: list[QLayoutItem], left: int, right: int, y: int, h: int) -> None:
        x = left
        for item in row:
            width = item.sizeHint().width()
            if self.last_apart and item is row[-1] and len(row) > 1:
                x = max(x, right + 1 - width)
            item.setGeometry(QRect(x, y, width, h))
            x += width + self.spacing()

    def _place_filling(self, row: list[QLayoutItem], left: int, width: int, y: int, h: int) -> None:
        """The row's buttons share the width left over equally (a tidy block when wrapped)."""
        natural = [item.sizeHint().width() for item in row]
        spare = max(0, width - sum(natural) - self.spacing() * (len(row) - 1))
        x = left
        for i, (item, wide) in enumerate(zip(row, natural, strict=True)):
            extra = spare // len(row) + (1 if i < spare % len(row) else 0)
            item.setGeometry(QRect(x, y, wide + extra, h))
            x += wide + extra + self.spacing()

    def _shown(self) -> list[QLayoutItem]:
        return [item for item in self._items if not item.isEmpty()]

    def _rows_height(self, rows: list[list[QLayoutItem]]) -> int:
        heights = [max((i.sizeHint().height() for i in row), default=0) for row in rows if row]
        return sum(heights) + self.spacing() * max(0, len(heights) - 1)

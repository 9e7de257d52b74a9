"""TwoLineDelegate: list items of two lines — a bold title and a muted detail, each elided.

For pickers whose items carry long identifiers (an MCP resource's URI, a prompt's
description): the item's text is `title\\ndetail`, and neither line ever runs past the list's
width, so nothing needs a sideways scroll bar at 400 px.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

Index = QModelIndex | QPersistentModelIndex


class TwoLineDelegate(QStyledItemDelegate):
    """Paints `title\\ndetail` items: the selection, then the two lines, each elided (the
    title in the middle; the detail as `detail_elide` says: a URI in the middle, prose at
    its end)."""

    def __init__(
        self,
        parent: QObject | None = None,
        detail_elide: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle,
    ) -> None:
        super().__init__(parent)
        self.detail_elide = detail_elide

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        """Two lines of text and a little air."""
        line = QFontMetrics(QApplication.font()).height()
        return QSize(200, 2 * line + 10)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        """The item's background (selected or not), then its title and detail."""
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect: QRect = opt.rect.adjusted(8, 5, -8, -5)
        state = opt.state
        palette: QPalette = opt.palette
        selected = bool(state & QStyle.StateFlag.State_Selected)
        title, _, detail = str(index.data() or "").partition("\n")
        base = QFont(QApplication.font())
        bold = QFont(base)
        bold.setBold(True)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        muted_role = text_role if selected else QPalette.ColorRole.PlaceholderText
        half = rect.height() // 2
        painter.save()
        for font, text, top, role, elide in (
            (bold, title, rect.top(), text_role, Qt.TextElideMode.ElideMiddle),
            (base, detail, rect.top() + half, muted_role, self.detail_elide),
        ):
            painter.setFont(font)
            painter.setPen(palette.color(role))
            shown = QFontMetrics(font).elidedText(text, elide, rect.width())
            flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
            painter.drawText(QRect(rect.left(), top, rect.width(), half), flags, shown)
        painter.restore()

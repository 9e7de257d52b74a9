"""Where an imported conversation comes from, as a small badge at the end of its line in the
sidebar ("ChatGPT", "Claude"); the line's tooltip says it stays read-only until continued.

`OriginBadgeDelegate` paints the row as the style does, its title elided short of the badge,
then the badge; a row without an origin is painted as any."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from koroku_desktop.domain.conversations import Conversation
from koroku_desktop.ui.widgets import theme

ORIGIN_ROLE = Qt.ItemDataRole.UserRole + 1
"""An item's origin badge text ("" or None: none)."""
PAD, GAP = 6, 6
"""Inside the badge either side of its text; between the title and the badge."""


def origin_badge(conversation: Conversation) -> str:
    """The badge of an imported chat (`ChatGPT`, `Claude`); "" for Koroku's own."""
    return "" if conversation.origin == "koroku" else conversation.origin_name


def origin_tooltip(conversation: Conversation) -> str:
    """The line's tooltip: its title and, for an imported chat, where from and its state."""
    if conversation.origin == "koroku":
        return conversation.title
    state = (
        "read-only until you continue it"
        if conversation.read_only
        else "continued here: Gemini sees it as plain history"
    )
    return f"{conversation.title}\nImported from {conversation.origin_name} — {state}"


class OriginBadgeDelegate(QStyledItemDelegate):
    """Paints a conversation's line with its origin badge at the right (see the module)."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        """The row as the style paints it, then the badge."""
        badge = str(index.data(ORIGIN_ROLE) or "")
        if not badge:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        small = QFont(opt.font)
        small.setPointSizeF(max(7.0, small.pointSizeF() - 1.5))
        small_fm = QFontMetrics(small)
        width = small_fm.horizontalAdvance(badge) + 2 * PAD
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        room = max(0, text_rect.width() - width - GAP)
        fm = QFontMetrics(opt.font)
        opt.text = fm.elidedText(opt.text, Qt.TextElideMode.ElideRight, room)
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect = opt.rect
        height = small_fm.height() + 2
        box = QRect(
            text_rect.right() - width + 1,
            rect.top() + (rect.height() - height) // 2,
            width,
            height,
        )
        th = theme.current()
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(th.color("border"))
        painter.setBrush(th.color("surface"))
        painter.drawRoundedRect(box, height / 2, height / 2)
        painter.setFont(small)
        painter.setPen(th.color("muted"))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, badge)
        painter.restore()

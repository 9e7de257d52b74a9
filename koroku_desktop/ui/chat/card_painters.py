"""Painters of card and marker rows: tool cards, compaction markers, dividers."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics, QTextBlockFormat, QTextCursor, QTextDocument

from koroku_desktop.render.text import FAIL_MARK, OK_MARK, pretty, short_args
from koroku_desktop.ui.chat.items import ChatItem, ToolStatus
from koroku_desktop.ui.chat.markdown_doc import CHIP_ROOM, blocks_chip
from koroku_desktop.ui.chat.row_painting import CARD_H, GAP, PAD_X, PAD_Y, Row, RowPainter
from koroku_desktop.ui.widgets.theme import Theme

STATUS_GLYPH: dict[ToolStatus, str] = {
    "pending": "○",
    "running": "◌",
    "ok": OK_MARK,
    "error": FAIL_MARK,
}
STATUS_COLOR: dict[ToolStatus, str] = {
    "pending": "muted",
    "running": "accent",
    "ok": "success",
    "error": "danger",
}


class _Card(RowPainter):
    """A row whose body shows under a header only when expanded."""

    collapsed_height = CARD_H + GAP

    def text_width(self, col: int) -> int:
        """The body is indented inside the card."""
        return col - 2 * PAD_X

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """The header alone, or the header and the body."""
        if not item.expanded:
            return self.collapsed_height
        return CARD_H + body() + 2 * PAD_Y + GAP


class ToolPainter(_Card):
    """A tool call: status glyph, name and arguments; expanded, its arguments and result."""

    def doc_font(self, font: QFont, th: Theme) -> QFont:
        """Monospace, a point smaller than the text."""
        mono = QFont(th.mono)
        mono.setStyleHint(QFont.StyleHint.Monospace)
        mono.setPointSizeF(max(7.0, font.pointSizeF() - 1))
        return mono

    def fill(self, doc: QTextDocument, item: ChatItem, th: Theme) -> None:
        """Arguments and result as `key: value` lines; the first leaves room for the Copy
        chip at its right (the chip covered the end of a long line and the top of the next)."""
        text = "Arguments\n" + pretty(item.args)
        if item.result is not None:
            text += "\n\nResult\n" + pretty(item.result)
        doc.setPlainText(text)
        room = QTextBlockFormat()
        room.setRightMargin(CHIP_ROOM)
        QTextCursor(doc.firstBlock()).mergeBlockFormat(room)

    def paint(self, row: Row) -> None:
        """The card, its header line and, expanded, its body with a Copy chip."""
        p, th, item = row.painter, row.th, row.item
        box = QRect(row.x0, row.rect.top() + GAP // 2, row.col, row.rect.height() - GAP)
        p.setPen(th.color("border"))
        p.setBrush(th.color("surface"))
        p.drawRoundedRect(box.adjusted(0, 0, -1, -1), 10, 10)
        header = QRect(box.left() + 12, box.top(), box.width() - 24, CARD_H - 2)
        closed_run = item.run > 1 and not item.run_open
        status = item.run_state if closed_run else item.status
        p.setFont(row.font)
        p.setPen(th.color(STATUS_COLOR[status]))
        glyph = STATUS_GLYPH[status]
        p.drawText(header, Qt.AlignmentFlag.AlignVCenter, glyph)
        fm = QFontMetrics(row.font)
        x = header.left() + fm.horizontalAdvance(glyph) + 10
        bold = QFont(row.font)
        bold.setWeight(QFont.Weight.DemiBold)
        p.setFont(bold)
        p.setPen(th.color("text"))
        name = f"{item.tool} ×{item.run}" if closed_run else item.tool
        name_w = QFontMetrics(bold).horizontalAdvance(name)
        name_rect = QRect(x, header.top(), name_w + 2, header.height())
        p.drawText(name_rect, Qt.AlignmentFlag.AlignVCenter, name)
        x += name_w + 10
        p.setFont(row.font)
        p.setPen(th.color("muted"))
        arrow = "▾" if item.expanded else "▸"
        fold = None
        if item.run > 1 and item.run_open:
            fold = QRect(header.right() - 96, header.top() + 6, 76, 20)
            header.setRight(fold.left() - 8)
        room = max(0, header.right() - fm.horizontalAdvance(arrow) - 8 - x)
        args = f"{item.run} calls · {short_args(item.args, 120)}" if closed_run else None
        if status == "running" and item.text:  # a server's progress report
            args = item.text
        summary = fm.elidedText(
            args or short_args(item.args, 200), Qt.TextElideMode.ElideRight, room
        )
        p.drawText(
            QRect(x, header.top(), room, header.height()), Qt.AlignmentFlag.AlignVCenter, summary
        )
        p.drawText(header, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, arrow)
        if fold is not None:
            row.chip(fold, f"Fold ×{item.run}", "run")
        action = "run" if closed_run else "toggle"
        row.hits.insert(0, (QRect(box.left(), box.top(), box.width(), CARD_H), action))
        if item.expanded:
            doc = row.doc()
            top = box.top() + CARD_H
            p.setPen(th.color("border"))
            p.drawLine(box.left() + 1, top - 2, box.right() - 1, top - 2)
            at = QPoint(box.left() + PAD_X, top + PAD_Y // 2)
            row.paint_doc(doc, at, th.color("text"))
            chip = blocks_chip(doc, doc.firstBlock(), doc.lastBlock())
            row.chip(chip.translated(at), "Copy", "copy:" + doc.toPlainText())


class CompactionPainter(_Card):
    """A compaction marker: `Earlier conversation summarised`; expanded, the summary."""

    collapsed_height = CARD_H + 2 * GAP

    def paint(self, row: Row) -> None:
        """The outlined marker and, expanded, the summary under it."""
        p, th, item = row.painter, row.th, row.item
        box = QRect(row.x0, row.rect.top() + GAP, row.col, row.rect.height() - 2 * GAP)
        p.setPen(th.color("border"))
        p.setBrush(th.color("accent_soft") if item.expanded else Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(box.adjusted(0, 0, -1, -1), 10, 10)
        header = QRect(box.left(), box.top(), box.width(), CARD_H - 2)
        p.setPen(th.color("muted"))
        p.setFont(row.font)
        arrow = "▾ Hide summary" if item.expanded else "▸ Show summary"
        p.drawText(header, Qt.AlignmentFlag.AlignCenter, f"⟲  {item.tool}   ·   {arrow}")
        row.hits.append((header, "toggle"))
        if item.expanded:
            at = QPoint(box.left() + PAD_X, box.top() + CARD_H + PAD_Y // 2)
            row.paint_doc(row.doc(), at, th.color("text"))


class DividerPainter(RowPainter):
    """A one-line marker across the column (cleared; a damaged row in the danger colour)."""

    def __init__(self, color: str) -> None:
        self.color = color

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """One line of text with room around it."""
        return line_h + 2 * GAP + 8

    def paint(self, row: Row) -> None:
        """Rules left and right of the label."""
        p, rect = row.painter, row.rect
        p.setFont(row.font)
        label = f"  {row.item.text}  "
        w = QFontMetrics(row.font).horizontalAdvance(label)
        mid = rect.center().y()
        p.setPen(row.th.color("border"))
        p.drawLine(row.x0, mid, rect.center().x() - w // 2, mid)
        p.drawLine(rect.center().x() + w // 2, mid, row.x0 + row.col, mid)
        p.setPen(row.th.color(self.color))
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)

"""Painters of text rows: the person's bubble, the model's answer, a thought."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPen, QTextDocument, QTextOption

from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.row_painting import GAP, PAD_X, PAD_Y, Row, RowPainter
from koroku_desktop.ui.widgets.theme import Theme

_ATTACHMENT_NOTE = re.compile(r"\*\[(.+?)\]\*")
"""How the items mark an attachment that has no chip, in Markdown (`*[photo.png]*`)."""


class UserPainter(RowPainter):
    """The person's message: plain text in a bubble on the right."""

    def text_width(self, col: int) -> int:
        """Bubbles take at most about three quarters of the column."""
        return int(col * 0.78) - 2 * PAD_X

    def fill(self, doc: QTextDocument, item: ChatItem, th: Theme) -> None:
        """What the person typed, as they typed it: plain text in the bubble's colour (Markdown
        drew inline code white on white and pushed code blocks out of the bubble); a long
        word or path wraps anywhere rather than leave the bubble."""
        doc.setPlainText(_ATTACHMENT_NOTE.sub(r"[\1]", item.text).strip("\n"))
        option = doc.defaultTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(option)

    def paint(self, row: Row) -> None:
        """The bubble, its text, and a Copy chip on hover."""
        doc = row.doc()
        w = int(min(doc.idealWidth(), self.text_width(row.col))) + 2 * PAD_X + 1
        h = int(doc.size().height()) + 2 * PAD_Y
        bubble = QRect(row.x0 + row.col - w, row.rect.top() + GAP // 2, w, h)
        row.painter.setPen(Qt.PenStyle.NoPen)
        row.painter.setBrush(row.th.color("user_bubble"))
        row.painter.drawRoundedRect(bubble, 14, 14)
        if "editing" in row.item.actions:  # the message being edited in the box below
            row.painter.setPen(QPen(row.th.color("accent"), 2, Qt.PenStyle.DashLine))
            row.painter.setBrush(Qt.BrushStyle.NoBrush)
            row.painter.drawRoundedRect(bubble.adjusted(-3, -3, 3, 3), 16, 16)
            label = QRect(bubble.left() - 150, bubble.top() + 4, 140, 20)
            row.painter.setPen(row.th.color("accent"))
            row.painter.drawText(label, Qt.AlignmentFlag.AlignRight, "✎ editing")
        at = QPoint(bubble.left() + PAD_X, bubble.top() + PAD_Y)
        row.paint_doc(doc, at, row.th.color("user_text"))
        if row.hover:
            row.chip(QRect(bubble.left() - 62, bubble.top() + 4, 56, 20), "Copy", _copy(row.item))
            if "edit" in row.item.actions:
                row.chip(QRect(bubble.left() - 124, bubble.top() + 4, 56, 20), "✎ Edit", "edit")
            _timestamp(row, QRect(bubble.left() - 150, bubble.top() + 28, 144, 18), right=True)


ACTIONS_H = 20
"""The line under an answer that its hover actions (Copy message, Regenerate, time) use."""


class ModelPainter(RowPainter):
    """The model's answer: Markdown across the column, Copy chips on code and on hover."""

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """No padding (the answer is not boxed), and a line under it for the hover actions,
        so they never cover its last line."""
        return body() + 2 * GAP + ACTIONS_H

    def paint(self, row: Row) -> None:
        """The text, its code blocks' Copy chips, and `Copy message` on hover."""
        doc = row.doc()
        at = QPoint(row.x0, row.rect.top() + GAP)
        row.paint_doc(doc, at, row.th.color("text"))
        row.copy_chips(doc, at)
        versions = row.item.args.get("versions")
        if versions is not None:
            _version_switch(row, at, int(doc.size().height()), versions)
        if row.hover and not row.item.streaming:
            _answer_actions(row, at, int(doc.size().height()))


def _version_switch(row: Row, at: QPoint, h: int, versions: tuple[int, int, str]) -> None:
    """`‹ 2/3 ›` under an answer that replaced others (regenerated or edited): the older and
    newer versions, one at a time."""
    shown, count, newest = versions
    top = at.y() + h + 2
    row.chip(QRect(at.x(), top, 22, 18), "‹", f"version:{newest}:-1")
    row.painter.setPen(row.th.color("muted"))
    row.painter.drawText(
        QRect(at.x() + 24, top, 40, 18), Qt.AlignmentFlag.AlignCenter, f"{shown}/{count}"
    )
    row.chip(QRect(at.x() + 66, top, 22, 18), "›", f"version:{newest}:1")


def _answer_actions(row: Row, at: QPoint, h: int) -> None:
    """`Copy message` (and `Regenerate` on the last answer) on the line under the answer at
    the right, the time before them."""
    chips = [(90, "Copy message", _copy(row.item))]
    if "regenerate" in row.item.actions:
        chips.append((96, "↻ Regenerate", "regenerate"))
    top = at.y() + h + 2
    x = at.x() + row.col
    small = QFont(row.font)
    small.setPointSizeF(max(7.0, small.pointSizeF() - 1.5))
    metrics = QFontMetrics(small)  # the chip's own font: its words never touch its border
    chips = [(max(w, metrics.horizontalAdvance(label) + 16), label, a) for w, label, a in chips]
    for width, label, action in chips:
        x -= width
        row.chip(QRect(x, top, width, 18), label, action)
        x -= 6
    _timestamp(row, QRect(x - 162, top, 160, 18), right=True)


class ThoughtPainter(RowPainter):
    """The model's reasoning summary: folded to `▸ Thoughts` (a click opens this one), or
    muted italics behind a bar when opened or when the window shows every thought."""

    folded_without_thoughts = True
    toggles_on_click = True

    def text_width(self, col: int) -> int:
        """Indented like a card's body."""
        return col - 2 * PAD_X

    def doc_font(self, font: QFont, th: Theme) -> QFont:
        """Italics."""
        italic = QFont(font)
        italic.setItalic(True)
        return italic

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """Open: its `▾ Thoughts` header (a click closes it again), then the text."""
        return line_h + body() + 2 * PAD_Y + GAP

    def paint(self, row: Row) -> None:
        """Folded: one muted line; open: the header line, the bar and the text."""
        p = row.painter
        p.setFont(row.font)
        p.setPen(row.th.color("accent" if row.hover else "muted"))
        header_h = p.fontMetrics().lineSpacing()
        if not (row.show_thoughts or row.item.expanded):
            line = QRect(row.x0, row.rect.top(), row.col, row.rect.height())
            p.drawText(line, Qt.AlignmentFlag.AlignVCenter, "▸ Thoughts")
            return
        header = QRect(row.x0, row.rect.top() + GAP // 2, row.col, header_h)
        p.drawText(header, Qt.AlignmentFlag.AlignVCenter, "▾ Thoughts")
        top = row.rect.top() + header_h
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(row.th.color("border"))
        bar = QRect(row.x0, top + GAP // 2, 3, row.rect.bottom() - top - GAP)
        p.drawRoundedRect(bar, 1, 1)
        at = QPoint(row.x0 + PAD_X, top + PAD_Y)
        row.paint_doc(row.doc(), at, row.th.color("muted"))


def when(created_at: float, now: float | None = None) -> str:
    """A message's time for its hover: `14:05` today, else `3 Mar 14:05` (empty: unknown)."""
    if created_at <= 0:
        return ""
    at = time.localtime(created_at)
    today = time.localtime(now if now is not None else time.time())
    if (at.tm_year, at.tm_yday) == (today.tm_year, today.tm_yday):
        return time.strftime("%H:%M", at)
    return time.strftime("%-d %b %Y %H:%M" if at.tm_year != today.tm_year else "%-d %b %H:%M", at)


def _timestamp(row: Row, rect: QRect, *, right: bool) -> None:
    text = when(row.item.created_at)
    if not text:
        return
    small = QFont(row.font)
    small.setPointSizeF(max(7.0, small.pointSizeF() - 1.5))
    row.painter.setFont(small)
    row.painter.setPen(row.th.color("muted"))
    align = Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft
    row.painter.drawText(rect, align | Qt.AlignmentFlag.AlignVCenter, text)


def _copy(item: ChatItem) -> str:
    return "copy:" + item.text

"""MessageDelegate: paints chat items (Markdown through QTextDocument) with cached sizes.

Heights are estimated from font metrics until a row is first painted, then measured exactly
and cached by (item, version, width), so that a 10,000-row conversation lays out in
milliseconds and only visible rows are ever typeset. (Longer than our ~400-line aim: it paints
every row kind — messages, thoughts, tool cards, compactions, dividers — with one geometry.)
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from koroku_desktop.render.text import pretty, short_args
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.markdown_doc import code_groups, style_code
from koroku_desktop.ui.chat.message_model import ITEM_ROLE, MessageModel
from koroku_desktop.ui.chat.stream_throttle import StreamThrottle
from koroku_desktop.ui.widgets import theme

AnyIndex = QModelIndex | QPersistentModelIndex

MAX_COLUMN = 860  # readable line length on wide windows
SIDE = 20
GAP = 8
PAD_X, PAD_Y = 14, 10
CARD_H = 34
DOC_CACHE = 400
STATUS_GLYPH = {"pending": "○", "running": "◌", "ok": "✓", "error": "✗"}


class MessageDelegate(QStyledItemDelegate):
    """Paints every kind of chat item; clicks toggle cards and hit copy buttons."""

    toggle_requested = Signal(int)
    copy_requested = Signal(str)

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view
        self._docs: OrderedDict[tuple[Any, ...], QTextDocument] = OrderedDict()
        self._heights: dict[tuple[Any, ...], int] = {}
        self._exact: set[tuple[Any, ...]] = set()
        self._hits: dict[int, list[tuple[QRect, str]]] = {}
        self._pending: set[int] = set()
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(0)
        self._flush.timeout.connect(self._emit_size_changes)
        self._stream = StreamThrottle(self._view.viewport().update, self)
        self._stale = False
        self.show_thoughts = False
        self._metrics_key = ""
        self._metrics_value = (7, 16)

    # -- geometry ----------------------------------------------------------------------

    def _width(self) -> int:
        # The view keeps its scroll bar, so this width does not flip when one appears.
        return max(200, self._view.viewport().width())

    def _column(self, width: int) -> tuple[int, int]:
        """Left edge and width of the readable content column."""
        col = min(MAX_COLUMN, width - 2 * SIDE)
        return (width - col) // 2, col

    def _text_width(self, item: ChatItem, width: int) -> int:
        _, col = self._column(width)
        if item.kind == "user":
            return int(col * 0.78) - 2 * PAD_X
        if item.kind in ("tool", "compaction"):
            return col - 2 * PAD_X
        if item.kind == "thought":
            return col - 2 * PAD_X
        return col

    def _doc(self, item: ChatItem, width: int) -> QTextDocument:
        key = (*item.cache_key, width)
        doc = self._docs.get(key)
        if doc is not None:
            self._docs.move_to_end(key)
            return doc
        self._stale = False
        if item.streaming:
            stale = self._stream.stale_layout(item.uid, width)
            if stale is not None:
                self._stale = True
                return stale
        started = time.perf_counter()
        th = theme.current()
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        font = QFont(self._view.font())
        if item.kind == "thought":
            font.setItalic(True)
        if item.kind == "tool":
            font = QFont(th.mono)
            font.setStyleHint(QFont.StyleHint.Monospace)
            font.setPointSizeF(max(7.0, self._view.font().pointSizeF() - 1))
        doc.setDefaultFont(font)
        if item.kind == "user":
            doc.setPlainText(item.text)
        elif item.kind == "tool":
            text = "Arguments\n" + pretty(item.args)
            if item.result is not None:
                text += "\n\nResult\n" + pretty(item.result)
            doc.setPlainText(text)
        else:
            doc.setMarkdown(item.text + (" ▍" if item.streaming else ""))
            style_code(doc, th)
        doc.setTextWidth(self._text_width(item, width))
        if item.streaming:
            doc.size()  # typeset now, so the cost is measured
            self._stream.built(item.uid, width, doc, started)
        self._docs[key] = doc
        while len(self._docs) > DOC_CACHE:
            self._docs.popitem(last=False)
        return doc

    def _metrics(self) -> tuple[int, int]:
        """Average character width and line spacing of the view's font (cached)."""
        font = self._view.font()
        key = font.key()
        if self._metrics_key != key:
            fm = QFontMetrics(font)
            self._metrics_key = key
            self._metrics_value = (max(1, fm.averageCharWidth()), fm.lineSpacing())
        return self._metrics_value

    def _estimate(self, item: ChatItem, width: int) -> int:
        char_w, line_h = self._metrics()
        per_line = max(10, max(50, self._text_width(item, width)) // char_w)
        text = item.text
        lines = text.count("\n") + 1 + len(text) // per_line
        return lines * line_h

    def _height(self, item: ChatItem, width: int, exact: bool) -> int:
        if item.kind == "thought" and not self.show_thoughts:
            return 0
        if item.kind == "cleared" or item.kind == "notice":
            return QFontMetrics(self._view.font()).lineSpacing() + 2 * GAP + 8
        if item.kind == "tool" and not item.expanded:
            return CARD_H + GAP
        if item.kind == "compaction" and not item.expanded:
            return CARD_H + 2 * GAP
        if exact:
            body = int(self._doc(item, width).size().height()) + 1
        else:
            body = self._estimate(item, width)
        if item.kind == "model":
            return body + 2 * GAP
        if item.kind in ("tool", "compaction"):
            return CARD_H + body + 2 * PAD_Y + GAP
        return body + 2 * PAD_Y + GAP

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        """Cached exact height when known, else a cheap estimate."""
        item = self._item(index)
        width = self._width()
        key = (*item.cache_key, width, self.show_thoughts)
        height = self._heights.get(key)
        if height is None:
            height = self._height(item, width, exact=False)
            self._heights[key] = height
        return QSize(width, height)

    def _item(self, index: AnyIndex) -> ChatItem:
        model = index.model()
        if isinstance(model, MessageModel):
            return model.item(index.row())
        item: ChatItem = index.data(ITEM_ROLE)
        return item

    def invalidate(self) -> None:
        """Forget cached sizes (font, theme or thought visibility changed)."""
        self._heights.clear()
        self._exact.clear()
        self._docs.clear()

    def _measure(self, item: ChatItem, index: AnyIndex) -> None:
        width = self._width()
        key = (*item.cache_key, width, self.show_thoughts)
        if key in self._exact:
            return
        height = self._height(item, width, exact=True)
        if not self._stale:  # a streaming answer's previous layout: measure again later
            self._exact.add(key)
        if self._heights.get(key) != height:
            self._heights[key] = height
            self._pending.add(index.row())
            self._flush.start()

    def _emit_size_changes(self) -> None:
        model = self._view.model()
        rows, self._pending = self._pending, set()
        for row in sorted(rows):
            if 0 <= row < model.rowCount():
                self.sizeHintChanged.emit(model.index(row, 0))

    # -- painting ----------------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        """Paint one row."""
        item: ChatItem = index.data(ITEM_ROLE)
        self._measure(item, index)
        rect: QRect = option.rect
        if rect.height() <= 0:
            return
        hover = bool(option.state & QStyle.StateFlag.State_MouseOver)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        hits: list[tuple[QRect, str]] = []
        th = theme.current()
        left, col = self._column(rect.width())
        x0 = rect.left() + left
        if item.kind == "user":
            self._paint_user(painter, item, rect, x0, col, th, hover, hits)
        elif item.kind == "model":
            self._paint_text(painter, item, QPoint(x0, rect.top() + GAP), th, hover, hits, col)
        elif item.kind == "thought":
            self._paint_thought(painter, item, rect, x0, col, th)
        elif item.kind == "tool":
            self._paint_tool(painter, item, rect, x0, col, th, hits)
        elif item.kind == "compaction":
            self._paint_compaction(painter, item, rect, x0, col, th, hits)
        else:
            self._paint_divider(painter, item, rect, th)
        painter.restore()
        self._hits[index.row()] = hits

    def _paint_doc(self, painter: QPainter, doc: QTextDocument, at: QPoint, color: QColor) -> None:
        painter.save()
        painter.translate(at)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.palette.setColor(QPalette.ColorRole.Text, color)
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    def _chip(self, painter: QPainter, rect: QRect, label: str, th: theme.Theme) -> None:
        painter.setPen(th.color("border"))
        painter.setBrush(th.color("surface"))
        painter.drawRoundedRect(rect, 6, 6)
        painter.setPen(th.color("muted"))
        small = QFont(self._view.font())
        small.setPointSizeF(max(7.0, small.pointSizeF() - 1.5))
        painter.setFont(small)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)

    def _copy_chips(
        self,
        painter: QPainter,
        doc: QTextDocument,
        at: QPoint,
        th: theme.Theme,
        hits: list[tuple[QRect, str]],
    ) -> None:
        for rect, code in code_groups(doc):
            chip = QRect(at.x() + rect.right() - 58, at.y() + rect.top() + 4, 54, 20)
            self._chip(painter, chip, "Copy", th)
            hits.append((chip, "copy:" + code))

    def _paint_text(
        self,
        painter: QPainter,
        item: ChatItem,
        at: QPoint,
        th: theme.Theme,
        hover: bool,
        hits: list[tuple[QRect, str]],
        col: int,
    ) -> None:
        doc = self._doc(item, self._width())
        self._paint_doc(painter, doc, at, th.color("text"))
        self._copy_chips(painter, doc, at, th, hits)
        if hover and not item.streaming:
            h = int(doc.size().height())
            chip = QRect(at.x(), at.y() + h + 1, 90, 18)
            if chip.bottom() > at.y() + h + GAP + 2:
                chip.moveTop(at.y() + h - 19)
                chip.moveLeft(at.x() + col - 90)
            self._chip(painter, chip, "Copy message", th)
            hits.append((chip, "copy:" + item.text))

    def _paint_user(
        self,
        painter: QPainter,
        item: ChatItem,
        rect: QRect,
        x0: int,
        col: int,
        th: theme.Theme,
        hover: bool,
        hits: list[tuple[QRect, str]],
    ) -> None:
        doc = self._doc(item, self._width())
        w = int(min(doc.idealWidth(), self._text_width(item, self._width()))) + 2 * PAD_X + 1
        h = int(doc.size().height()) + 2 * PAD_Y
        bubble = QRect(x0 + col - w, rect.top() + GAP // 2, w, h)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(th.color("user_bubble"))
        painter.drawRoundedRect(bubble, 14, 14)
        self._paint_doc(
            painter, doc, QPoint(bubble.left() + PAD_X, bubble.top() + PAD_Y), th.color("user_text")
        )
        if hover:
            chip = QRect(bubble.left() - 62, bubble.top() + 4, 56, 20)
            self._chip(painter, chip, "Copy", th)
            hits.append((chip, "copy:" + item.text))

    def _paint_thought(
        self, painter: QPainter, item: ChatItem, rect: QRect, x0: int, col: int, th: theme.Theme
    ) -> None:
        doc = self._doc(item, self._width())
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(th.color("border"))
        painter.drawRoundedRect(QRect(x0, rect.top() + GAP // 2, 3, rect.height() - GAP), 1, 1)
        self._paint_doc(painter, doc, QPoint(x0 + PAD_X, rect.top() + PAD_Y), th.color("muted"))

    def _card_frame(self, painter: QPainter, box: QRect, th: theme.Theme) -> None:
        painter.setPen(th.color("border"))
        painter.setBrush(th.color("surface"))
        painter.drawRoundedRect(box.adjusted(0, 0, -1, -1), 10, 10)

    def _paint_tool(
        self,
        painter: QPainter,
        item: ChatItem,
        rect: QRect,
        x0: int,
        col: int,
        th: theme.Theme,
        hits: list[tuple[QRect, str]],
    ) -> None:
        box = QRect(x0, rect.top() + GAP // 2, col, rect.height() - GAP)
        self._card_frame(painter, box, th)
        header = QRect(box.left() + 12, box.top(), box.width() - 24, CARD_H - 2)
        color = {"ok": "success", "error": "danger", "running": "accent"}.get(item.status, "muted")
        font = QFont(self._view.font())
        painter.setFont(font)
        painter.setPen(th.color(color))
        glyph = STATUS_GLYPH[item.status]
        painter.drawText(header, Qt.AlignmentFlag.AlignVCenter, glyph)
        fm = QFontMetrics(font)
        x = header.left() + fm.horizontalAdvance(glyph) + 10
        bold = QFont(font)
        bold.setWeight(QFont.Weight.DemiBold)
        painter.setFont(bold)
        painter.setPen(th.color("text"))
        name_w = QFontMetrics(bold).horizontalAdvance(item.tool)
        painter.drawText(
            QRect(x, header.top(), name_w + 2, header.height()),
            Qt.AlignmentFlag.AlignVCenter,
            item.tool,
        )
        x += name_w + 10
        painter.setFont(font)
        painter.setPen(th.color("muted"))
        arrow = "▾" if item.expanded else "▸"
        tail = fm.horizontalAdvance(arrow) + 8
        summary = fm.elidedText(
            short_args(item.args, 200),
            Qt.TextElideMode.ElideRight,
            max(0, header.right() - tail - x),
        )
        painter.drawText(
            QRect(x, header.top(), header.right() - tail - x, header.height()),
            Qt.AlignmentFlag.AlignVCenter,
            summary,
        )
        painter.drawText(header, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, arrow)
        hits.append((QRect(box.left(), box.top(), box.width(), CARD_H), "toggle"))
        if item.expanded:
            doc = self._doc(item, self._width())
            at = QPoint(box.left() + PAD_X, box.top() + CARD_H)
            painter.setPen(th.color("border"))
            painter.drawLine(box.left() + 1, at.y() - 2, box.right() - 1, at.y() - 2)
            self._paint_doc(painter, doc, QPoint(at.x(), at.y() + PAD_Y // 2), th.color("text"))
            copy = QRect(box.right() - 66, at.y() + 6, 56, 20)
            self._chip(painter, copy, "Copy", th)
            hits.append((copy, "copy:" + doc.toPlainText()))

    def _paint_compaction(
        self,
        painter: QPainter,
        item: ChatItem,
        rect: QRect,
        x0: int,
        col: int,
        th: theme.Theme,
        hits: list[tuple[QRect, str]],
    ) -> None:
        box = QRect(x0, rect.top() + GAP, col, rect.height() - 2 * GAP)
        painter.setPen(th.color("border"))
        painter.setBrush(th.color("accent_soft") if item.expanded else Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(box.adjusted(0, 0, -1, -1), 10, 10)
        header = QRect(box.left(), box.top(), box.width(), CARD_H - 2)
        painter.setPen(th.color("muted"))
        painter.setFont(self._view.font())
        arrow = "▾ Hide summary" if item.expanded else "▸ Show summary"
        painter.drawText(header, Qt.AlignmentFlag.AlignCenter, f"⟲  {item.tool}   ·   {arrow}")
        hits.append((header, "toggle"))
        if item.expanded:
            doc = self._doc(item, self._width())
            self._paint_doc(
                painter,
                doc,
                QPoint(box.left() + PAD_X, box.top() + CARD_H + PAD_Y // 2),
                th.color("text"),
            )

    def _paint_divider(
        self, painter: QPainter, item: ChatItem, rect: QRect, th: theme.Theme
    ) -> None:
        painter.setFont(self._view.font())
        fm = QFontMetrics(self._view.font())
        label = f"  {item.text}  "
        w = fm.horizontalAdvance(label)
        mid = rect.center().y()
        left, col = self._column(rect.width())
        painter.setPen(th.color("border"))
        painter.drawLine(rect.left() + left, mid, rect.center().x() - w // 2, mid)
        painter.drawLine(rect.center().x() + w // 2, mid, rect.left() + left + col, mid)
        painter.setPen(th.color("danger") if item.kind == "notice" else th.color("muted"))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)

    # -- input -------------------------------------------------------------------------

    def editorEvent(
        self, event: QEvent, model: Any, option: QStyleOptionViewItem, index: AnyIndex
    ) -> bool:
        """Copy chips copy; clicks on a card header toggle it."""
        if event.type() != QEvent.Type.MouseButtonRelease or not isinstance(event, QMouseEvent):
            return False
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        pos = event.position().toPoint()
        for rect, action in reversed(self._hits.get(index.row(), [])):
            if rect.contains(pos):
                if action.startswith("copy:"):
                    text = action[5:]
                    QGuiApplication.clipboard().setText(text)
                    self.copy_requested.emit(text)
                else:
                    self.toggle_requested.emit(index.row())
                return True
        item: ChatItem = index.data(ITEM_ROLE)
        if item.kind == "thought":
            self.toggle_requested.emit(index.row())
            return True
        return False

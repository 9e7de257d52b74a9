"""HistoryList: the timeline read like a history — grouped by day under a day heading, each
event drawn as in the chat (your messages in a bubble on the right, Koroku's answers on the
left, tool calls as small cards, summaries and clears as dividers). The selected event opens
in full below, with its raw JSON one click away."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from koroku_desktop.domain.events import DamagedEvent, LogEntry
from koroku_desktop.render.fold import entry_view
from koroku_desktop.ui.viewer import event_render
from koroku_desktop.ui.viewer.timeline_model import TimelineModel
from koroku_desktop.ui.widgets import theme

AnyIndex = QModelIndex | QPersistentModelIndex
DAY_H = 34
ROW_H = 46
LABEL_H = 10
"""Added to a row for its conversation's name (when the timeline shows several)."""
COLUMN = 820


_MD_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")
_MD_MARKS = re.compile(r"```\w*|\*\*|__|`|^#+\s+|(?<=\s)#+\s+")


def markdown_line(text: str) -> str:
    """A one-line summary as it reads: Markdown's marks (`**`, backticks, fences, headings)
    dropped and links shown by their words (the detail pane keeps the source)."""
    return " ".join(_MD_MARKS.sub("", _MD_LINK.sub(r"\1", text)).split())


def day_of(entry: LogEntry) -> date:
    """The local calendar day of an event."""
    return datetime.fromtimestamp(entry.created_at).date()


def day_heading(day: date, today: date | None = None) -> str:
    """`Today`, `Yesterday`, or `Monday 28 November 2026`."""
    today = today or date.today()
    if day == today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    return f"{day:%A} {day.day} {day:%B %Y}"


def starts_day(model: TimelineModel, row: int) -> bool:
    """Whether `row` is the first (newest) row of its day."""
    entry = model.entry_at(row)
    if entry is None:
        return False
    above = model.entry_at(row - 1) if row > 0 else None
    return above is None or day_of(above) != day_of(entry)


def shows_conversation(model: TimelineModel) -> bool:
    """Rows name their conversation when the timeline shows more than one."""
    return model.query.conversation is None and len(model.conversation_ids) > 1


class HistoryDelegate(QStyledItemDelegate):
    """Paints a timeline row as in the chat, with a day heading above a day's first row."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view

    def _model(self) -> TimelineModel:
        model = self._view.model()
        assert isinstance(model, TimelineModel)
        return model

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        """A fixed row height, plus the heading on a day's first row and a line for the
        conversation's name when the timeline shows several."""
        model = self._model()
        extra = DAY_H if starts_day(model, index.row()) else 0
        extra += LABEL_H if shows_conversation(model) else 0
        return QSize(self._view.viewport().width(), ROW_H + extra)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        """Heading, then the event in its chat shape."""
        model = self._model()
        entry = model.entry_at(index.row())
        if entry is None:
            return
        th = theme.current()
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRect(option.rect)
        width = min(COLUMN, rect.width() - 32)
        x0 = rect.left() + (rect.width() - width) // 2
        font = QFont(option.font)
        if starts_day(model, index.row()):
            bold = QFont(font)
            bold.setWeight(QFont.Weight.DemiBold)
            painter.setFont(bold)
            painter.setPen(th.color("text"))
            head = QRect(x0, rect.top() + 8, width, DAY_H - 10)
            painter.drawText(head, Qt.AlignmentFlag.AlignVCenter, day_heading(day_of(entry)))
            painter.setPen(th.color("border"))
            painter.drawLine(x0, head.bottom(), x0 + width, head.bottom())
            rect.setTop(rect.top() + DAY_H)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        status = model.status_at(index.row())
        live = status == "live"
        self._entry(painter, entry, QRect(x0, rect.top(), width, rect.height()), font, selected)
        small = QFont(font)
        small.setPointSizeF(max(7.0, font.pointSizeF() - 2))
        painter.setFont(small)
        painter.setPen(th.color("muted"))
        tag = QRect(x0, rect.bottom() - 14, width, 14)
        if not live:
            why = f"{status}, " if status.startswith("replaced") else ""
            text = f"#{entry.seq} · {why}not in context"
            painter.drawText(tag, Qt.AlignmentFlag.AlignLeft, text)
            tag.setLeft(tag.left() + QFontMetrics(small).horizontalAdvance(text) + 16)
        if shows_conversation(model):
            where = QFontMetrics(small).elidedText(
                model.conversation_title(entry.conversation_id),
                Qt.TextElideMode.ElideRight,
                max(0, min(tag.width(), width // 2)),
            )
            painter.drawText(tag, Qt.AlignmentFlag.AlignRight, f"in {where}")
        painter.restore()

    def _entry(self, p: QPainter, entry: LogEntry, box: QRect, font: QFont, selected: bool) -> None:
        th = theme.current()
        fm = QFontMetrics(font)
        time_text = datetime.fromtimestamp(entry.created_at).strftime("%H:%M")
        text = markdown_line(event_render.summary(entry))
        speaker = "marker" if isinstance(entry, DamagedEvent) else entry_view(entry).speaker
        body = QRect(box.left(), box.top() + 6, box.width(), box.height() - 18)
        p.setFont(font)
        if selected:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(th.color("accent_soft"))
            p.drawRoundedRect(box.adjusted(-8, 2, 8, -2), 8, 8)
        p.setPen(th.color("muted"))
        stamp = QRect(box.left(), body.top(), 44, fm.height() + 12)
        p.drawText(stamp, Qt.AlignmentFlag.AlignVCenter, time_text)
        inner = QRect(box.left() + 52, body.top(), box.width() - 52, fm.height() + 12)
        if speaker == "user":
            shown = fm.elidedText(text, Qt.TextElideMode.ElideRight, int(inner.width() * 0.75))
            w = fm.horizontalAdvance(shown) + 24
            bubble = QRect(inner.right() - w, inner.top(), w, inner.height())
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(th.color("user_bubble"))
            p.drawRoundedRect(bubble, 12, 12)
            p.setPen(th.color("user_text"))
            p.drawText(bubble, Qt.AlignmentFlag.AlignCenter, shown)
        elif speaker in ("tools", "repair") or text.startswith("→ "):
            p.setPen(th.color("border"))
            p.setBrush(th.color("surface"))
            p.drawRoundedRect(inner, 8, 8)
            p.setPen(th.color("muted"))
            shown = fm.elidedText(text, Qt.TextElideMode.ElideRight, inner.width() - 20)
            p.drawText(inner.adjusted(10, 0, -10, 0), Qt.AlignmentFlag.AlignVCenter, shown)
        elif speaker == "marker":
            color = "danger" if isinstance(entry, DamagedEvent) else "muted"
            p.setPen(th.color(color))
            shown = fm.elidedText(text, Qt.TextElideMode.ElideRight, inner.width() - 40)
            p.drawText(inner, Qt.AlignmentFlag.AlignCenter, f"— {shown} —")
        else:
            p.setPen(th.color("text"))
            shown = fm.elidedText(text, Qt.TextElideMode.ElideRight, inner.width())
            p.drawText(inner, Qt.AlignmentFlag.AlignVCenter, shown)


class HistoryList(QListView):
    """The timeline's rows as a history; selection, lazy fetching and jumps as before."""

    def __init__(self, model: TimelineModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("HistoryList")
        self.setModel(model)
        self.setItemDelegate(HistoryDelegate(self))
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setUniformItemSizes(False)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setMouseTracking(True)
        self.setResizeMode(QListView.ResizeMode.Adjust)  # rows follow the width
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # A heading depends on the row above: re-measure when rows arrive or go.
        model.rowsInserted.connect(self.scheduleDelayedItemsLayout)
        model.modelReset.connect(self.scheduleDelayedItemsLayout)

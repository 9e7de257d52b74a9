"""Rows the running turn adds to the conversation: a live status line (thinking, running a
tool, retrying, waiting for another front end's turn) and how the turn ended (stopped, failed
with Retry, tool budget reached, answer cut off). They are not log events: they say what
Koroku is doing now, and a reload shows the log as it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFont, QTextCharFormat, QTextCursor, QTextDocument

from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.row_painting import GAP, PAD_X, PAD_Y, Row, RowPainter
from koroku_desktop.ui.widgets.theme import Theme

NoticeKind = Literal["stopped", "error", "budget", "cutoff"]
"""How a turn ended, when it did not simply answer."""

NOTICE_COLOR: dict[str, str] = {
    "stopped": "muted",
    "error": "danger",
    "budget": "warn",
    "cutoff": "warn",
}
NOTICE_TITLE: dict[str, str] = {
    "stopped": "■ Stopped",
    "error": "⚠ The request failed",
    "budget": "⚑ Tool budget reached",
    "cutoff": "✂ Answer cut off",
}


def status_text(kind: str, detail: str = "") -> str:
    """The status line for what the turn does now."""
    match kind:
        case "thinking":
            return "Thinking…"
        case "tool":
            return f"Running the tool {detail}…"
        case "approval":
            return f"Waiting for your answer about {detail}…"
        case "waiting":
            return f"Waiting for the turn running in {detail or 'another window'}…"
        case _:
            return detail


def retry_text(attempt: int, attempts: int, reason: str) -> str:
    """The status line while a request is retried."""
    return f"Retrying ({attempt} of {attempts}, {reason})…"


class StatusPainter(RowPainter):
    """One muted line with a pulsing dot: what the running turn is doing."""

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """One line."""
        return line_h + 2 * GAP + 4

    def paint(self, row: Row) -> None:
        """The dot and the text."""
        p, rect = row.painter, row.rect
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(row.th.color("accent"))
        mid = rect.center().y()
        p.drawEllipse(QPoint(row.x0 + 5, mid), 4, 4)
        p.setFont(row.font)
        p.setPen(row.th.color("muted"))
        text_rect = QRect(row.x0 + 18, rect.top(), row.col - 18, rect.height())
        p.drawText(text_rect, Qt.AlignmentFlag.AlignVCenter, row.item.text)


class TurnNoticePainter(RowPainter):
    """How a turn ended, in a box under the answer; a failure's full text and a Retry chip."""

    def text_width(self, col: int) -> int:
        """Inside the box."""
        return col - 2 * PAD_X

    def fill(self, doc: QTextDocument, item: ChatItem, th: Theme) -> None:
        """The title, then the full text (plain: an error message is not Markdown)."""
        doc.setPlainText(f"{NOTICE_TITLE.get(item.tool, item.tool)}\n{item.text}".strip())
        cursor = QTextCursor(doc.firstBlock())
        cursor.select(QTextCursor.SelectionType.BlockUnderCursor)
        bold = QTextCharFormat()
        bold.setFontWeight(QFont.Weight.DemiBold)
        cursor.mergeCharFormat(bold)

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """The text in a padded box; room for Retry under a failure."""
        extra = 28 if item.tool == "error" else 0
        return body() + 2 * PAD_Y + GAP + extra

    def paint(self, row: Row) -> None:
        """The box in the notice's colour, the text, and Retry for a failure."""
        p, th, item = row.painter, row.th, row.item
        box = QRect(row.x0, row.rect.top() + GAP // 2, row.col, row.rect.height() - GAP)
        color = th.color(NOTICE_COLOR.get(item.tool, "muted"))
        p.setPen(color)
        p.setBrush(th.color("surface"))
        p.drawRoundedRect(box.adjusted(0, 0, -1, -1), 10, 10)
        at = QPoint(box.left() + PAD_X, box.top() + PAD_Y)
        row.paint_doc(row.doc(), at, th.color("text"))
        if item.tool == "error":
            row.chip(QRect(box.left() + PAD_X, box.bottom() - 28, 64, 22), "Retry", "retry")
            row.chip(
                QRect(box.left() + PAD_X + 72, box.bottom() - 28, 56, 22),
                "Copy",
                "copy:" + item.text,
            )

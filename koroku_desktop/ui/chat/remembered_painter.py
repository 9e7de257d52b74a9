"""RememberedPainter: the "Remembered" row as one clickable chip per passage.

A click on a chip asks the window to open it (`remembered:<message seq>:<passage seq>`);
a dismissed passage's chip stays, greyed and struck through, so the row still says what
was sent with the message.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics

from koroku_desktop.domain.remembered import Remembered
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.row_painting import GAP, Row, RowPainter

CHIP_H = 22
CHIP_GAP = 6
CHIP_MAX_W = 260


def chip_action(surfaced_seq: int, passage_seq: int) -> str:
    """The click action of one chip (parsed by `parse_chip_action`)."""
    return f"remembered:{surfaced_seq}:{passage_seq}"


def parse_chip_action(action: str) -> tuple[int, int] | None:
    """(message seq, passage seq) of a chip's action, None for any other action."""
    head, _, rest = action.partition(":")
    surfaced, _, passage = rest.partition(":")
    if head != "remembered" or not surfaced.isdigit() or not passage.isdigit():
        return None
    return int(surfaced), int(passage)


def chip_label(passage: Remembered) -> str:
    """What a chip says: the passage's seq and the start of its text."""
    return f"#{passage.seq} " + " ".join(passage.text.split())


class RememberedPainter(RowPainter):
    """ "Remembered:" then a small rounded chip per passage, left to right on one line."""

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """One line of chips with room around it."""
        return max(line_h, CHIP_H) + 2 * GAP

    def paint(self, row: Row) -> None:
        """The label, then the chips (greyed and struck through once dismissed)."""
        p, item = row.painter, row.item
        passages: tuple[Remembered, ...] = item.args.get("passages", ())
        dismissed: set[int] = item.args.get("dismissed", set())
        small = QFont(row.font)
        small.setPointSizeF(max(7.0, small.pointSizeF() - 1.0))
        metrics = QFontMetrics(small)
        p.setFont(small)
        top = row.rect.top() + (row.rect.height() - CHIP_H) // 2
        label = "Remembered:"
        x = row.x0
        p.setPen(row.th.color("muted"))
        label_w = metrics.horizontalAdvance(label)
        p.drawText(QRect(x, top, label_w, CHIP_H), Qt.AlignmentFlag.AlignVCenter, label)
        x += label_w + CHIP_GAP
        right = row.x0 + row.col
        room = (right - x - CHIP_GAP * max(0, len(passages) - 1)) // max(1, len(passages))
        for passage in passages:
            gone = passage.seq in dismissed
            width = min(CHIP_MAX_W, room)
            text = metrics.elidedText(chip_label(passage), Qt.TextElideMode.ElideRight, width - 16)
            width = min(width, metrics.horizontalAdvance(text) + 16)
            rect = QRect(x, top, width, CHIP_H)
            p.setOpacity(0.5 if gone else 1.0)
            p.setPen(row.th.color("border"))
            p.setBrush(row.th.color("window" if gone else "accent_soft"))
            p.drawRoundedRect(rect, CHIP_H // 2, CHIP_H // 2)
            font = QFont(small)
            font.setStrikeOut(gone)
            p.setFont(font)
            p.setPen(row.th.color("muted" if gone else "text"))
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
            p.setOpacity(1.0)
            if item.seq is not None:
                row.hits.append((rect, chip_action(item.seq, passage.seq)))
            x += width + CHIP_GAP

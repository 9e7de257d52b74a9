"""What every chat-row painter shares: the geometry, the per-row paint context, the base painter.

A `RowPainter` knows how one kind of row is laid out (text width, document font and content,
height) and painted; `MessageDelegate` picks one per row kind from the table in `painters`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QPainter,
    QPalette,
    QTextCharFormat,
    QTextDocument,
    QTextOption,
)

from koroku_desktop.ui.chat.code_highlight import highlight_code
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.markdown_doc import code_groups, style_code
from koroku_desktop.ui.widgets.theme import Theme

MAX_COLUMN = 760  # a centred, readable column on wide windows
SIDE = 20
GAP = 8
PAD_X, PAD_Y = 14, 10
CARD_H = 34

Hits = list[tuple[QRect, str]]
"""Click targets of a painted row: a rect and its action (`toggle`, `copy:<text>`, `retry`)."""


def column(width: int) -> tuple[int, int]:
    """Left edge and width of the readable content column in a row `width` wide."""
    col = min(MAX_COLUMN, width - 2 * SIDE)
    return (width - col) // 2, col


@dataclass
class Row:
    """One row being painted: where, with what, and the click targets it leaves behind."""

    painter: QPainter
    item: ChatItem
    rect: QRect
    th: Theme
    font: QFont
    """The view's font."""
    hover: bool
    doc: Callable[[], QTextDocument]
    """The row's laid-out document (built and cached by the delegate)."""
    hits: Hits = field(default_factory=list)
    show_thoughts: bool = False
    """Whether the window shows every thought (else each opens on its own)."""
    visible: QRect | None = None
    """The part of the view on screen, in the row's coordinates (None: draw everything)."""
    find: str = ""
    """Text being looked for (Ctrl+F): its occurrences are highlighted."""
    find_current: bool = False
    """This row holds the match Find is on (drawn stronger)."""

    @property
    def x0(self) -> int:
        """Left edge of the content column."""
        return self.rect.left() + column(self.rect.width())[0]

    @property
    def col(self) -> int:
        """Width of the content column."""
        return column(self.rect.width())[1]

    def paint_doc(self, doc: QTextDocument, at: QPoint, color: QColor) -> None:
        """Draw `doc` with its top-left at `at`, text in `color`.

        Only the part inside the painted device is drawn: unclipped, a long answer (40,000
        characters) was drawn whole on every repaint while it streamed.
        """
        self.painter.save()
        self.painter.translate(at)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.palette.setColor(QPalette.ColorRole.Text, color)
        if self.visible is not None:
            ctx.clip = QRectF(self.visible.translated(-at))
        if self.find:
            ctx.selections = self._found(doc)
        doc.documentLayout().draw(self.painter, ctx)
        self.painter.restore()

    def _found(self, doc: QTextDocument) -> list[QAbstractTextDocumentLayout.Selection]:
        """Highlights for every occurrence of the text Find looks for."""
        fmt = QTextCharFormat()
        colour = QColor(self.th.color("accent"))
        colour.setAlpha(150 if self.find_current else 70)
        fmt.setBackground(colour)
        out: list[QAbstractTextDocumentLayout.Selection] = []
        cursor = doc.find(self.find, 0)
        while not cursor.isNull() and len(out) < 500:
            selection = QAbstractTextDocumentLayout.Selection()
            selection.cursor = cursor
            selection.format = fmt
            out.append(selection)
            cursor = doc.find(self.find, cursor)
        return out

    def chip(self, rect: QRect, label: str, action: str) -> None:
        """A small rounded button (Copy...) that runs `action` when clicked."""
        p = self.painter
        p.setPen(self.th.color("border"))
        p.setBrush(self.th.color("surface"))
        p.drawRoundedRect(rect, 6, 6)
        p.setPen(self.th.color("muted"))
        small = QFont(self.font)
        small.setPointSizeF(max(7.0, small.pointSizeF() - 1.5))
        p.setFont(small)
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
        self.hits.append((rect, action))

    def copy_chips(self, doc: QTextDocument, at: QPoint) -> None:
        """A Copy chip on each fenced code block of `doc` drawn at `at`."""
        for chip, code in code_groups(doc):
            self.chip(chip.translated(at), "Copy", "copy:" + code)


class RowPainter:
    """How one kind of row is laid out and painted; the base lays out Markdown text."""

    folded_without_thoughts = False
    """One folded line unless thoughts are shown or the row is expanded."""
    toggles_on_click = False
    """A click anywhere on the row toggles it."""

    def text_width(self, col: int) -> int:
        """Width of the row's document in a content column `col` wide."""
        return col

    def doc_font(self, font: QFont, th: Theme) -> QFont:
        """The document's default font, from the view's font."""
        return QFont(font)

    def fill(self, doc: QTextDocument, item: ChatItem, th: Theme) -> None:
        """Put the item's content into `doc` (Markdown, code blocks styled for `th`)."""
        doc.setMarkdown(item.text + (" ▍" if item.streaming else ""))
        option = doc.defaultTextOption()  # a long path or URL wraps rather than overflow
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(option)
        style_code(doc, th)
        if not item.streaming:  # coloured once complete: typesetting stays cheap while streaming
            highlight_code(doc, th)

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """The row's height, given its document's height (`body`, asked only when needed)."""
        return body() + 2 * PAD_Y + GAP

    def paint(self, row: Row) -> None:
        """Paint the row."""
        raise NotImplementedError

"""How the chat shows a grounded reply's sources: a compact "Sources" list under the answer,
one small line per source (`[1] Title · site`), each a link that opens in the browser."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QFont, QTextDocument

from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.row_painting import GAP, Row, RowPainter
from koroku_desktop.ui.widgets.theme import Theme

OPEN = "open:"
"""A hit's action prefix: open the link after it."""


class SourcesPainter(RowPainter):
    """A small muted list of links under the answer; a click on a line opens its source."""

    def doc_font(self, font: QFont, th: Theme) -> QFont:
        """A point smaller than the answer."""
        small = QFont(font)
        small.setPointSizeF(max(7.0, small.pointSizeF() - 1))
        return small

    def fill(self, doc: QTextDocument, item: ChatItem, th: Theme) -> None:
        """One paragraph per source: the number, the title as a link, the site muted; then
        the Google Search suggestions, each a link to its results."""
        muted, link = th.color("muted").name(), th.color("accent").name()
        rows = [f'<p style="color:{muted}; margin:0 0 2px 0;"><b>Sources</b>']
        queries = item.args.get("queries") or []
        suggestions = item.args.get("suggestions") or []
        if queries and not suggestions:  # else the suggestions below name them, as links
            searched = "; ".join(html.escape(q) for q in queries)
            rows[0] += f" · searched: {searched}"
        rows[0] += "</p>"
        for number, title, uri, site in item.args.get("sources", []):
            shown = site and site not in title
            tail = f' <span style="color:{muted};">· {html.escape(site)}</span>' if shown else ""
            rows.append(
                f'<p style="margin:0;"><span style="color:{muted};">[{number}]</span> '
                f'<a href="{html.escape(uri, quote=True)}" style="color:{link};">'
                f"{html.escape(title)}</a>{tail}</p>"
            )
        for query, uri in suggestions:  # Google Search suggestions: one link a line
            rows.append(
                f'<p style="margin:0;"><span style="color:{muted};">Google ›</span> '
                f'<a href="{html.escape(uri, quote=True)}" style="color:{link};">'
                f"{html.escape(query)}</a></p>"
            )
        doc.setHtml("".join(rows))

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """The list and a little room under it."""
        return body() + GAP + 4

    def paint(self, row: Row) -> None:
        """The list; each source's line is a click target that opens its link."""
        doc = row.doc()
        at = QPoint(row.x0, row.rect.top() + 2)
        row.paint_doc(doc, at, row.th.color("muted"))
        layout = doc.documentLayout()
        block = doc.begin()
        while block.isValid():
            href = _first_link(block)
            if href:
                rect = layout.blockBoundingRect(block).toRect().translated(at)
                rect.setWidth(min(rect.width(), int(doc.idealWidth()) + 4))
                row.hits.append((QRect(rect), OPEN + href))
            block = block.next()


def _first_link(block: Any) -> str:
    """The first link in a text block ('' when it has none)."""
    it = block.begin()
    while not it.atEnd():
        fragment = it.fragment()
        if fragment.isValid() and fragment.charFormat().isAnchor():
            return str(fragment.charFormat().anchorHref())
        it += 1
    return ""

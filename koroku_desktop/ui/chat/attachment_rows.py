"""Attached files in the conversation: image thumbnails and file cards, clickable to open.

A row's height comes from its type alone (an image row is a thumbnail tall), so laying out a
long history never reads a blob; the thumbnail is decoded when the row is first painted and
kept in a small cache. A click opens a private temporary copy in the desktop's application.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, QRectF, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainterPath, QPixmap

from koroku_desktop.app.runtime import AttachmentStore
from koroku_desktop.domain.attachment import human_size, kind_label
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.row_painting import GAP, Row, RowPainter
from koroku_desktop.ui.widgets.attachment_tray import badge_text

THUMB_W, THUMB_H = 260, 170
CARD_W, CARD_H = 300, 58
CACHE = 48
SHOWN_IMAGES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
"""Images Qt decodes on its own (HEIC shows as a file card)."""


class ThumbnailCache:
    """Decoded, scaled thumbnails by blob hash, from `store` (the app's attachment store)."""

    def __init__(self) -> None:
        self.store: AttachmentStore | None = None
        self._cache: OrderedDict[str, QPixmap | None] = OrderedDict()

    def use(self, store: AttachmentStore | None) -> None:
        """Read thumbnails (and open copies) from `store` from now on."""
        if store is not self.store:
            self.store = store
            self._cache.clear()

    def pixmap(self, sha256: str) -> QPixmap | None:
        """The thumbnail of an image blob (None when missing or undecodable)."""
        if sha256 in self._cache:
            self._cache.move_to_end(sha256)
            return self._cache[sha256]
        thumb = None
        if self.store is not None:
            try:
                image = QImage.fromData(self.store.read(sha256))
            except (LookupError, OSError):
                image = QImage()
            if not image.isNull():
                scaled = image.scaled(
                    QSize(THUMB_W, THUMB_H),
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
                thumb = QPixmap.fromImage(scaled)
        self._cache[sha256] = thumb
        while len(self._cache) > CACHE:
            self._cache.popitem(last=False)
        return thumb


THUMBNAILS = ThumbnailCache()


def attachment_part(args: dict[str, Any]) -> AttachmentPart:
    """The part a row shows, from its `args`."""
    return AttachmentPart(
        sha256=str(args["sha256"]),
        mime_type=str(args.get("mime_type") or "application/octet-stream"),
        name=str(args.get("name") or ""),
        size=int(args.get("size") or 0),
    )


def open_copy(store: AttachmentStore | None, args: dict[str, Any]) -> Path:
    """A temporary copy of a row's file to open; raises LookupError when it is not here."""
    if store is None:
        raise LookupError("no attachment store")
    return store.open_copy(attachment_part(args))


def _is_image(item: ChatItem) -> bool:
    return str(item.args.get("mime_type")) in SHOWN_IMAGES


class AttachmentPainter(RowPainter):
    """An attached file: a thumbnail for an image, else a card with its type, name and size."""

    def height(self, item: ChatItem, body: Callable[[], int], line_h: int) -> int:
        """As tall as the thumbnail (a wide picture's is short: no gap under it), else a card."""
        if not _is_image(item):
            return CARD_H + GAP
        thumb = THUMBNAILS.pixmap(str(item.args.get("sha256", "")))
        return (thumb.height() if thumb is not None else THUMB_H) + GAP

    def paint(self, row: Row) -> None:
        """Right-aligned under the person's name, left for the model; a click opens it."""
        item = row.item
        sha = str(item.args.get("sha256", ""))
        thumb = THUMBNAILS.pixmap(sha) if _is_image(item) else None
        mine = item.tool != "model"
        top = row.rect.top() + GAP // 2
        if thumb is not None:
            size = thumb.size()
            x = row.x0 + row.col - size.width() if mine else row.x0
            rect = QRect(x, top, size.width(), size.height())
            path = QPainterPath()
            path.addRoundedRect(QRectF(rect), 12, 12)
            row.painter.save()
            row.painter.setClipPath(path)
            row.painter.drawPixmap(rect, thumb)
            row.painter.restore()
            row.painter.setPen(row.th.color("accent" if row.hover else "border"))
            row.painter.setBrush(Qt.BrushStyle.NoBrush)
            row.painter.drawPath(path)
        else:
            width = min(CARD_W, row.col)
            x = row.x0 + row.col - width if mine else row.x0
            rect = QRect(x, top, width, CARD_H - 4)
            self._card(row, rect)
        row.hits.append((rect, f"file:{sha}"))

    def _card(self, row: Row, rect: QRect) -> None:
        p, th, args = row.painter, row.th, row.item.args
        p.setPen(th.color("accent" if row.hover else "border"))
        p.setBrush(th.color("surface"))
        p.drawRoundedRect(rect, 12, 12)
        badge = QRect(rect.left() + 10, rect.top() + 9, rect.height() - 18, rect.height() - 18)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(th.color("accent_soft"))
        p.drawRoundedRect(badge, 8, 8)
        small = QFont(row.font)
        small.setPointSizeF(max(7.0, small.pointSizeF() - 2))
        small.setBold(True)
        p.setFont(small)
        p.setPen(th.color("accent"))
        mime = str(args.get("mime_type") or "")
        p.drawText(badge, Qt.AlignmentFlag.AlignCenter, badge_text(mime))
        text_x = badge.right() + 12
        text_w = rect.right() - 12 - text_x
        name_font = QFont(row.font)
        name_font.setBold(True)
        p.setFont(name_font)
        p.setPen(th.color("text"))
        name = QFontMetrics(name_font).elidedText(
            str(args.get("name") or "attachment"), Qt.TextElideMode.ElideMiddle, text_w
        )
        half = rect.height() // 2
        p.drawText(
            QRect(text_x, rect.top() + 7, text_w, half - 7),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom,
            name,
        )
        detail = f"{kind_label(mime)} · {human_size(int(args.get('size') or 0))}"
        if args.get("server"):  # an MCP resource, like its chip in the composer
            detail = f"MCP {args['server']} · {detail}"
        p.setFont(QFont(row.font))
        p.setPen(th.color("muted"))
        p.drawText(
            QRect(text_x, rect.top() + half + 1, text_w, half - 7),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
            detail,
        )

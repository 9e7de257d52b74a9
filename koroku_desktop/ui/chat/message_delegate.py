"""MessageDelegate: lays out and paints chat rows, one painter per row kind, with cached sizes.

Heights are estimated from font metrics until a row is first painted, then measured exactly
and cached by (item, version, width, theme), so that a 10,000-row conversation lays out in
milliseconds and only visible rows are ever typeset. How each kind of row looks lives in its
painter (`painters.PAINTERS`); this class owns the caches, the dispatch and the clicks.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QSize,
    Qt,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import (
    QDesktopServices,
    QFontMetrics,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QTextDocument,
)
from PySide6.QtWidgets import QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.message_model import ITEM_ROLE, MessageModel
from koroku_desktop.ui.chat.painters import PAINTERS
from koroku_desktop.ui.chat.row_painting import GAP, Hits, Row, column
from koroku_desktop.ui.chat.sources import OPEN
from koroku_desktop.ui.chat.stream_doc import StreamingDocs
from koroku_desktop.ui.chat.stream_throttle import StreamThrottle
from koroku_desktop.ui.widgets import theme

AnyIndex = QModelIndex | QPersistentModelIndex

DOC_CACHE = 400


class MessageDelegate(QStyledItemDelegate):
    """Paints every kind of chat item; clicks toggle cards and hit copy buttons."""

    toggle_requested = Signal(int)
    run_toggle_requested = Signal(int)  # open/close a run of same-tool cards
    copy_requested = Signal(str)
    action_requested = Signal(str)  # a row's other actions: `retry`
    link_opened = Signal(str)  # a source's link, opened in the browser

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view
        self._docs: OrderedDict[tuple[Any, ...], QTextDocument] = OrderedDict()
        self._heights: dict[tuple[Any, ...], int] = {}
        self._exact: set[tuple[Any, ...]] = set()
        self._hits: dict[int, Hits] = {}
        self._pending: set[int] = set()
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(0)
        self._flush.timeout.connect(self._emit_size_changes)
        self._stream = StreamThrottle(self._view.viewport().update, self)
        self._growing = StreamingDocs()
        self._stale = False
        self.show_thoughts = False
        self.find_text = ""
        """What Ctrl+F looks for (highlighted in every painted row)."""
        self.find_row = -1
        """The row of the match Find is on."""
        self._metrics_key = ""
        self._metrics_value = (7, 16)
        self._hint_epoch = 0
        """Bumped when every row's cached size hint must be recomputed (font change)."""
        self._theme: theme.Theme | None = None
        self._theme_ids: dict[theme.Theme, int] = {}
        self._theme_id = 0

    # -- geometry ----------------------------------------------------------------------

    def _width(self) -> int:
        # The view keeps its scroll bar, so this width does not flip when one appears.
        return max(200, self._view.viewport().width())

    def _key(self, item: ChatItem, width: int) -> tuple[Any, ...]:
        """What a cached layout of `item` depends on: its content, the width and the theme."""
        th = theme.current()
        if th is not self._theme:  # equal themes paint alike and share their layouts
            self._theme = th
            self._theme_id = self._theme_ids.setdefault(th, len(self._theme_ids))
        return (*item.cache_key, width, self._theme_id)

    def _doc(self, item: ChatItem, width: int) -> QTextDocument:
        key = self._key(item, width)
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
        painter = PAINTERS[item.kind]
        if item.kind == "model" and not item.streaming:
            text_w = painter.text_width(column(width)[1])
            adopted = self._growing.adopt(item.text, text_w, th)
            if adopted is not None:
                if self._growing.behind:  # not finished yet: build on at the next frame
                    self._stale = True
                    QTimer.singleShot(0, self._view, self._view.viewport().update)
                else:
                    self._docs[key] = adopted
                return adopted
        if item.streaming and item.kind == "model":
            font = painter.doc_font(self._view.font(), th)
            text_w = painter.text_width(column(width)[1])
            doc = self._growing.document(item.uid, item.text, text_w, font, th)
            doc.size()  # typeset now, so the cost is measured
            self._stream.built(item.uid, width, doc, started)
            if self._growing.behind:  # not all of the text yet: build on at the next frame
                self._stale = True
                QTimer.singleShot(0, self._view, self._view.viewport().update)
            else:
                self._docs[key] = doc
            return doc
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(painter.doc_font(self._view.font(), th))
        painter.fill(doc, item, th)
        doc.setTextWidth(painter.text_width(column(width)[1]))
        if item.streaming:
            doc.size()  # typeset now, so the cost is measured
            self._stream.built(item.uid, width, doc, started)
        self._docs[key] = doc
        while len(self._docs) > DOC_CACHE:
            self._docs.popitem(last=False)
        return doc

    def _metrics(self) -> tuple[int, int]:
        """Average character width and line spacing of the view's font (cached until the
        view's font changes: asking the font for its key costs more than the estimate)."""
        if self._metrics_key:
            return self._metrics_value
        fm = QFontMetrics(self._view.font())
        self._metrics_key = "known"
        self._metrics_value = (max(1, fm.averageCharWidth()), fm.lineSpacing())
        return self._metrics_value

    def font_changed(self) -> None:
        """The view's font changed: measure its metrics again and re-estimate every row."""
        self._metrics_key = ""
        self._hint_epoch += 1

    def _height(self, item: ChatItem, width: int, exact: bool) -> int:
        painter = PAINTERS[item.kind]
        if item.folded:
            return 0
        char_w, line_h = self._metrics()
        if painter.folded_without_thoughts and not (self.show_thoughts or item.expanded):
            return line_h + GAP + 6

        def body() -> int:
            if exact:
                return int(self._doc(item, width).size().height()) + 1
            text_w = painter.text_width(column(width)[1])
            per_line = max(10, max(50, text_w) // char_w)
            return (item.text.count("\n") + 1 + len(item.text) // per_line) * line_h

        return painter.height(item, body, line_h)

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        """Cached exact height when known, else a cheap estimate.

        The answer is also kept on the item with what it depends on, so the next layout of
        an unchanged row (a 10,000-row view lays out every row) is one comparison.
        """
        item = self._item(index)
        width = self._width()
        th = theme.current()
        stamp = (item.version, item.expanded, width, th, self.show_thoughts, self._hint_epoch)
        hint = item.layout_hint
        if hint is not None and hint[0] == stamp:
            size: QSize = hint[1]
            return size
        key = (*self._key(item, width), self.show_thoughts)
        height = self._heights.get(key)
        if height is None:
            height = self._height(item, width, exact=False)
            self._heights[key] = height
        size = QSize(width, height)
        item.layout_hint = (stamp, size)
        return size

    def _item(self, index: AnyIndex) -> ChatItem:
        model = index.model()
        if isinstance(model, MessageModel):
            return model.item(index.row())
        item: ChatItem = index.data(ITEM_ROLE)
        return item

    def _measure(self, item: ChatItem, index: AnyIndex) -> None:
        width = self._width()
        key = (*self._key(item, width), self.show_thoughts)
        if key in self._exact:
            return
        height = self._height(item, width, exact=True)
        if not self._stale:  # a streaming answer's previous layout: measure again later
            self._exact.add(key)
        if self._heights.get(key) != height:
            self._heights[key] = height
            item.layout_hint = None
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
        """Paint one row with the painter of its kind."""
        item: ChatItem = index.data(ITEM_ROLE)
        self._measure(item, index)
        if option.rect.height() <= 0:
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        row = Row(
            painter=painter,
            item=item,
            rect=option.rect,
            th=theme.current(),
            font=self._view.font(),
            hover=bool(option.state & QStyle.StateFlag.State_MouseOver),
            doc=lambda: self._doc(item, self._width()),
            show_thoughts=self.show_thoughts,
            visible=self._view.viewport().rect(),
            find=self.find_text,
            find_current=index.row() == self.find_row,
        )
        PAINTERS[item.kind].paint(row)
        painter.restore()
        self._hits[index.row()] = row.hits

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
                elif action == "toggle":
                    self.toggle_requested.emit(index.row())
                elif action == "run":
                    self.run_toggle_requested.emit(index.row())
                elif action.startswith(OPEN):
                    QDesktopServices.openUrl(QUrl(action[len(OPEN) :]))
                    self.link_opened.emit(action[len(OPEN) :])
                else:
                    self.action_requested.emit(action)
                return True
        item: ChatItem = index.data(ITEM_ROLE)
        if PAINTERS[item.kind].toggles_on_click:
            self.toggle_requested.emit(index.row())
            return True
        return False

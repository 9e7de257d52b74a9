"""Keeps a long streaming answer from hogging the event loop while it is laid out again.

Every streamed piece changes the answer, and typesetting its Markdown costs time in its
length (about 30 ms at 40,000 characters). So a streaming answer is typeset again only once
`factor` times its last typesetting cost has passed; meanwhile the previous layout is shown
and a repaint is scheduled for when the new one is due. Rendering then takes at most about
1/factor of the loop, and no stall is longer than one typesetting.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QTextDocument

FACTOR = 4.0


@dataclass
class _Layout:
    doc: QTextDocument
    width: int
    built_at: float
    cost: float


class StreamThrottle(QObject):
    """Remembers each streaming item's last layout and says when a new one is due."""

    def __init__(self, repaint: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._layouts: dict[int, _Layout] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(repaint)

    def stale_layout(self, uid: int, width: int) -> QTextDocument | None:
        """The previous layout of item `uid` while a new one is not due yet, else None."""
        layout = self._layouts.get(uid)
        if layout is None or layout.width != width:
            return None
        wait = layout.built_at + FACTOR * layout.cost - time.perf_counter()
        if wait <= 0:
            return None
        if not self._timer.isActive():
            self._timer.start(max(1, int(wait * 1000) + 1))
        return layout.doc

    def built(self, uid: int, width: int, doc: QTextDocument, started: float) -> None:
        """Record a fresh layout of item `uid` that took since `started` to build."""
        now = time.perf_counter()
        self._layouts = {uid: _Layout(doc, width, now, now - started)}

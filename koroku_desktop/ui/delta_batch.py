"""DeltaBatch: streamed text arrives from Gemini in many small pieces; the chat gains
nothing from an update per piece, and each update costs a layout. The pieces are collected
and handed on about once a frame (16 ms), or at once when an event lands (`flush`), so the
text shown is always whole before what follows it."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

FRAME_MS = 16


class DeltaBatch(QObject):
    """Collects streamed pieces and emits them joined, at most about once a frame."""

    def __init__(self, emit: Callable[[str], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._emit = emit
        self._pieces: list[str] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self.flush)

    def add(self, piece: str) -> None:
        """Take a piece (cheap per chunk); it goes out with the next frame's batch."""
        self._pieces.append(piece)
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Emit the collected text now."""
        self._timer.stop()
        if self._pieces:
            text = "".join(self._pieces)
            self._pieces.clear()
            self._emit(text)

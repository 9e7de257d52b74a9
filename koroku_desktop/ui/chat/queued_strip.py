"""QueuedStrip: the row of chips above the message box for messages waiting for their turn
(sent while a turn runs here or in another front end). A widget of its own so the chat
window only hands it the bridge's queue."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel


class QueuedStrip(QFrame):
    """One 'Queued · …' chip a waiting message, hidden while none waits."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("QueuedStrip")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.setVisible(False)

    def show_texts(self, texts: list[str]) -> None:
        """Show these messages (in order) as chips, the whole text in each one's tooltip."""
        while self._layout.count():
            child = self._layout.takeAt(0)
            widget = child.widget() if child is not None else None
            if widget is not None:
                widget.deleteLater()
        for text in texts:
            short = text if len(text) < 60 else text[:57] + "…"
            chip = QLabel(f"Queued · {short}")
            chip.setObjectName("QueuedChip")
            chip.setToolTip(text)
            self._layout.addWidget(chip)
        self._layout.addStretch(1)
        self.setVisible(bool(texts))

"""RememberedCard: one remembered passage opened from its chip, with what can be done with it.

It shows where the passage comes from and what it says, "Show in history" (the viewer jumps
to that event) and "Dismiss" (not relevant: recorded in the log, not surfaced again in this
conversation). A dismissed passage shows as such, with nothing left to dismiss.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from koroku_desktop.domain.remembered import Remembered
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.widgets import theme

CARD_WIDTH = 420


class RememberedCard(QFrame):
    """A small popup over the chat: the passage in full, Show in history, Dismiss."""

    show_in_history = Signal(int)  # the passage's seq
    dismiss_requested = Signal(int, int)  # passage seq, seq of the message it came with

    def __init__(
        self,
        passage: Remembered,
        surfaced_seq: int,
        dismissed: bool,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setObjectName("RememberedCard")
        self.passage = passage
        self.surfaced_seq = surfaced_seq
        t = theme.current()
        self.setStyleSheet(
            f"QFrame#RememberedCard {{ background: {t.surface}; border: 1px solid {t.border};"
            " border-radius: 8px; }"
            f" QLabel#RememberedSource {{ color: {t.muted}; }}"
            f" QLabel#RememberedText {{ color: {t.text}; }}"
        )
        self.setFixedWidth(CARD_WIDTH)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.setSpacing(8)
        source = QLabel(
            f"Remembered from #{passage.seq} · {passage.when} · {passage.who}"
            + (" · dismissed" if dismissed else "")
        )
        source.setObjectName("RememberedSource")
        self.text = QLabel(passage.text)
        self.text.setObjectName("RememberedText")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(source)
        layout.addWidget(self.text)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.history_button = QPushButton("Show in history")
        self.history_button.clicked.connect(self._show)
        self.dismiss_button = QPushButton("Dismissed" if dismissed else "Dismiss")
        self.dismiss_button.setToolTip(
            "Not relevant: Koroku will not bring this passage up again in this conversation."
        )
        self.dismiss_button.setEnabled(not dismissed)
        self.dismiss_button.clicked.connect(self._dismiss)
        buttons.addWidget(self.history_button)
        buttons.addWidget(self.dismiss_button)
        layout.addLayout(buttons)

    def _show(self) -> None:
        self.close()
        self.show_in_history.emit(self.passage.seq)

    def _dismiss(self) -> None:
        self.close()
        self.dismiss_requested.emit(self.passage.seq, self.surfaced_seq)


def remembered_card(
    items: list[ChatItem], surfaced_seq: int, passage_seq: int, parent: QWidget | None = None
) -> RememberedCard | None:
    """The card of passage `passage_seq` on the "Remembered" row of message `surfaced_seq`
    (None when no loaded row has it)."""
    for item in items:
        if item.kind != "remembered" or item.seq != surfaced_seq:
            continue
        for passage in item.args.get("passages", ()):
            if passage.seq == passage_seq:
                gone = passage_seq in item.args.get("dismissed", set())
                return RememberedCard(passage, surfaced_seq, gone, parent)
    return None

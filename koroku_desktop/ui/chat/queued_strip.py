"""QueuedStrip: the chips above the message box for messages waiting for their turn (sent
while a turn runs here or in another front end), each with ✎ (take it back into the message
box to change it) and ✕ (remove it). A widget of its own so the chat window only hands it
the bridge's queue."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout

from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.turn_lanes import QueuedTurn
from koroku_desktop.ui.widgets.chat_input import ChatInput


class QueuedStrip(QFrame):
    """One 'Queued · …' chip a waiting message, hidden while none waits."""

    remove_requested = Signal(str)  # turn id
    edit_requested = Signal(str)  # turn id
    acted = Signal()  # a chip's button was used (the message box should get the keys back)

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("QueuedStrip")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self.chips: list[QFrame] = []
        self.setVisible(False)

    def show_texts(self, texts: list[str]) -> None:
        """Show these messages as chips without actions (a queue without turn ids)."""
        self.show_turns([QueuedTurn("", text) for text in texts])

    def show_turns(self, turns: list[QueuedTurn]) -> None:
        """Show the waiting messages (in order), the whole text in each one's tooltip."""
        for chip in self.chips:
            chip.hide()
            chip.deleteLater()
        self.chips = [self._chip(turn) for turn in turns]
        for chip in self.chips:
            self._layout.addWidget(chip)
        self.setVisible(bool(turns))

    def _chip(self, turn: QueuedTurn) -> QFrame:
        chip = QFrame()
        chip.setObjectName("QueuedChip")
        row = QHBoxLayout(chip)
        row.setContentsMargins(8, 2, 2, 2)
        row.setSpacing(2)
        text = turn.text.replace("\n", " ")
        short = text if len(text) < 80 else text[:77] + "…"
        label = QLabel(f"Queued · {short}")
        label.setObjectName("QueuedLabel")
        label.setToolTip(turn.text)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        row.addWidget(label, 1)
        if turn.turn_id:
            for glyph, tip, signal in (
                ("✎", "Edit: take it back into the message box", self.edit_requested),
                ("✕", "Remove from the queue (it is not sent)", self.remove_requested),
            ):
                button = QToolButton()
                button.setText(glyph)
                button.setToolTip(tip)
                button.setAccessibleName(tip.split(":")[0].split(" (")[0])
                button.setAutoRaise(True)
                button.setCursor(Qt.CursorShape.PointingHandCursor)
                button.clicked.connect(lambda _=False, s=signal, t=turn.turn_id: s.emit(t))
                row.addWidget(button)
        return chip

    def wire(self, bridge: AgentBridge, box: ChatInput, tell: Callable[[str, int], None]) -> None:
        """✕ takes the message out of `bridge`'s queue (it is not sent); ✎ also puts it
        back into `box` (after what is being typed) to change and send again."""

        def remove(turn_id: str) -> None:
            if bridge.unqueue(turn_id) is not None:
                tell("Removed from the queue", 2000)
            self.acted.emit()

        def edit(turn_id: str) -> None:
            text = bridge.unqueue(turn_id)
            if text is not None:
                typed = box.toPlainText().rstrip()
                box.setPlainText(f"{typed}\n\n{text}" if typed else text)
                box.moveCursor(box.textCursor().MoveOperation.End)
            self.acted.emit()

        self.remove_requested.connect(remove)
        self.edit_requested.connect(edit)

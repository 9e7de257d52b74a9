"""EmptyState: what a new (or cleared) conversation shows — what Koroku can do, and example
prompts that fill the message box when clicked."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from koroku_desktop.ui.widgets.controls import note_label

EXAMPLES = (
    "Which files in Downloads are the largest?",
    "Summarise README.md in five bullet points",
    "What did we talk about last week?",
)


class EmptyState(QWidget):
    """A centred note and example prompts; `prompt_chosen(text)` when one is clicked."""

    prompt_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("EmptyState")
        col = QVBoxLayout(self)
        col.setContentsMargins(24, 24, 24, 24)
        col.setSpacing(10)
        col.addStretch(1)
        title = QLabel("What can I help with?")
        title.setObjectName("EmptyTitle")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        col.addWidget(title)
        note = note_label(
            "Koroku answers with Gemini, reads and edits files and runs commands on this "
            "computer — asking you first — and remembers every conversation."
        )
        note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        col.addWidget(note)
        self.buttons: list[QPushButton] = []
        for text in EXAMPLES:
            button = QPushButton(text)
            button.setObjectName("ExamplePrompt")
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setMaximumWidth(560)
            button.clicked.connect(lambda _=False, t=text: self.prompt_chosen.emit(t))
            self.buttons.append(button)
            col.addWidget(button, 0, Qt.AlignmentFlag.AlignHCenter)
        col.addStretch(2)

"""The Settings dialog's "Memory & thinking" group: surfaced memories and thinking levels."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QGroupBox, QVBoxLayout, QWidget

from koroku_desktop.app.config import Settings
from koroku_desktop.ui.widgets.controls import note_label
from koroku_desktop.ui.widgets.narrow_form import narrow_form

LEVELS = (
    ("", "The model's default"),
    ("minimal", "Minimal"),
    ("low", "Low"),
    ("medium", "Medium"),
    ("high", "High"),
)
MEMORIES_HELP = (
    "Before each message Koroku looks for related passages from earlier conversations and "
    "shows them as “Remembered” under your message. It uses Gemini's embedding model."
)


class RecallGroup(QGroupBox):
    """Remembered passages on or off, and how hard the model thinks in chat and quick-ask."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Memory && thinking", parent)
        form = narrow_form(self)
        self.memories = QCheckBox("Bring up related memories")
        remembered = QWidget()  # the check box with its note under it, as one field: a note
        col = QVBoxLayout(remembered)  # in a row of its own got the height of a narrower one
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(2)
        col.addWidget(self.memories)
        col.addWidget(note_label(MEMORIES_HELP))
        form.addRow("Remembered", remembered)
        self.thinking = self._levels()
        form.addRow("Thinking in chat", self.thinking)
        self.quick_thinking = self._levels()
        form.addRow("Thinking in quick-ask", self.quick_thinking)

    @staticmethod
    def _levels() -> QComboBox:
        box = QComboBox()
        for value, label in LEVELS:
            box.addItem(label, value)
        return box

    def load(self, s: Settings) -> None:
        """Show the settings' values."""
        self.memories.setChecked(s.surface_memories)
        levels = [v for v, _ in LEVELS]
        self.thinking.setCurrentIndex(levels.index(s.thinking_level))
        self.quick_thinking.setCurrentIndex(levels.index(s.quick_ask_thinking_level))

    def values(self) -> dict[str, Any]:
        """The edited values by setting name (always valid: they are chosen from lists)."""
        return {
            "surface_memories": self.memories.isChecked(),
            "thinking_level": self.thinking.currentData(),
            "quick_ask_thinking_level": self.quick_thinking.currentData(),
        }

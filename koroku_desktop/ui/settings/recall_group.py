"""The Settings dialog's "Memory & thinking" group: surfaced memories and thinking levels."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QWidget

from koroku_desktop.app.config import Settings
from koroku_desktop.ui.widgets.controls import note_label

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
        form = QFormLayout(self)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # a narrow window
        self.memories = QCheckBox("Bring up related memories")
        form.addRow("Remembered", self.memories)
        help_label = note_label(MEMORIES_HELP)
        form.addRow("", help_label)
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

"""The Settings dialog's "What Koroku knows about you" group: the facts, and the switch.

The switch (`remember_facts`) is a setting like the others: applied on Save. The facts
themselves change at once (each change is an event in the log), as the group says.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QGroupBox, QVBoxLayout, QWidget

from koroku_desktop.app.config import Settings
from koroku_desktop.ui.widgets.controls import note_label
from koroku_desktop.ui.widgets.facts_editor import FactsEditor, FactsKeeper

FACTS_HELP = (
    "Koroku keeps short facts about you, your preferences, the people in your life and your "
    "projects — when you ask it to remember something, and from each summary of a long "
    "conversation — and sends them with every message. Changes to the facts below are saved "
    "at once; the history keeps every earlier version."
)
OFF_HELP = "Off: no facts are sent or gathered. The stored ones stay, and come back when on."


class FactsGroup(QGroupBox):
    """Facts about the user on or off (on Save), and the facts themselves (at once)."""

    def __init__(
        self,
        keeper: FactsKeeper | None,
        conversation_id: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("What Koroku knows about you", parent)
        col = QVBoxLayout(self)
        self.enabled = QCheckBox("Remember facts about me")
        col.addWidget(self.enabled)
        help_label = note_label(FACTS_HELP)
        col.addWidget(help_label)
        self.off_note = note_label(OFF_HELP)
        col.addWidget(self.off_note)
        self.enabled.toggled.connect(lambda on: self.off_note.setVisible(not on))
        self.editor = FactsEditor(keeper, conversation_id) if keeper is not None else None
        if self.editor is not None:
            self.editor.list.setMinimumHeight(120)
            col.addWidget(self.editor)

    def load(self, s: Settings) -> None:
        """Show the settings' value."""
        self.enabled.setChecked(s.remember_facts)
        self.off_note.setVisible(not s.remember_facts)

    def values(self) -> dict[str, Any]:
        """The edited value by setting name."""
        return {"remember_facts": self.enabled.isChecked()}

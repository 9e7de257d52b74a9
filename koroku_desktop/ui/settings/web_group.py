"""The Settings dialog's "Web" group: Gemini's Google Search grounding and URL context."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QGroupBox, QVBoxLayout, QWidget

from koroku_desktop.app.config import Settings
from koroku_desktop.ui.settings.env_lock import env_lock
from koroku_desktop.ui.widgets.controls import note_label

WEB_HELP = (
    "Gemini searches Google or reads the pages of links you give it, and Koroku lists the "
    "sources under the answer. Search grounding costs extra: on Gemini 3 models Google bills "
    "each search query Gemini runs (about $14 per 1,000 after a free monthly allowance; "
    "older models bill per grounded prompt), see ai.google.dev/gemini-api/docs/pricing. "
    "Pages read through URL context count as input tokens. Together with Koroku's own tools "
    "both need a Gemini 3 model: other models refuse the combination, and Koroku says so."
)


class WebGroup(QGroupBox):
    """Two switches: offer Google Search, offer URL context (env variables win over them)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Web", parent)
        col = QVBoxLayout(self)
        self.search = QCheckBox("Search the web (Google Search)")
        self.urls = QCheckBox("Read URLs (URL context)")
        for name, box in (("google_search", self.search), ("url_context", self.urls)):
            col.addWidget(box)
            if (note := env_lock(box, name)) is not None:
                col.addWidget(note)
        help_label = note_label(WEB_HELP)
        col.addWidget(help_label)

    def load(self, s: Settings) -> None:
        """Show the settings' values."""
        self.search.setChecked(s.google_search)
        self.urls.setChecked(s.url_context)

    def values(self) -> dict[str, Any]:
        """The edited values by setting name."""
        return {"google_search": self.search.isChecked(), "url_context": self.urls.isChecked()}

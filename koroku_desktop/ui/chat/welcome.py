"""WelcomeCard: the very first start's short message — the tray icon (or, with none, what
closing the window does), the quick-ask shortcut
and where the data lives. Shown once; remembered in `settings.welcomed`."""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from koroku_desktop.app.config import Paths
from koroku_desktop.app.settings_store import SettingsStore
from koroku_desktop.ui.chat.setup_card import CardHost, ThemedCard, card_label


def welcome_html(shortcut: str, paths: Paths, tray: bool = True) -> list[str]:
    """The welcome's paragraphs; without a tray (no tray on this desktop) the first one says
    what closing the window does instead of pointing at an icon that is not there."""
    home = html.escape(str(paths.home))
    first = (
        "<b>Koroku lives in your system tray.</b> Click its icon to open this window; closing "
        "the window keeps Koroku running there. Right-click the icon for quick ask, "
        "History &amp; memory, Settings and Quit."
        if tray
        else "<b>This window is Koroku.</b> Your desktop shows no tray icons, so closing it "
        "quits Koroku; the buttons at the top right open History &amp; memory and Settings, "
        "and <code>koroku</code> in a terminal opens it again."
    )
    return [
        first,
        f"<b>Quick ask from anywhere:</b> bind the command <code>koroku quick-ask</code> to "
        f"{html.escape(shortcut)} in your desktop's keyboard settings (Qt cannot grab a global "
        "shortcut on Linux).",
        f"<b>Your data stays here:</b> <code>{home}</code> — the event log "
        "<code>koroku.db</code>, daily memory files in <code>memory/</code> and your own "
        "tools in <code>tools/</code>. Nothing is ever deleted: see History &amp; memory.",
    ]


class WelcomeCard(ThemedCard):
    """A dismissible card with three things worth knowing on the first day."""

    dismissed = Signal()

    def __init__(
        self, shortcut: str, paths: Paths, tray: bool = True, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        col = QVBoxLayout(self)
        col.setContentsMargins(22, 16, 22, 16)
        col.setSpacing(8)
        col.addWidget(card_label("Welcome to Koroku", "CardTitle"))
        self.paragraphs = [card_label(p) for p in welcome_html(shortcut, paths, tray)]
        for label in self.paragraphs:
            col.addWidget(label)
        row = QHBoxLayout()
        row.addStretch(1)
        self.ok_button = QPushButton("Got it")
        self.ok_button.clicked.connect(self._dismiss)
        row.addWidget(self.ok_button)
        col.addLayout(row)

    def text(self) -> str:
        """The card's text (for tests and accessibility)."""
        return "\n".join(label.text() for label in self.paragraphs)

    def _dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()
        self.deleteLater()


def welcome_if_first_start(
    host: CardHost, settings: SettingsStore, paths: Paths, tray: bool = True
) -> WelcomeCard | None:
    """Show the welcome card on the very first start, and remember it was shown."""
    current = settings.effective
    if current.welcomed:
        return None
    card = WelcomeCard(current.quick_ask_shortcut, paths, tray)
    host.insert_card(card)
    settings.update({"welcomed": True})
    return card

"""SetupCard: shown in the chat window while there is no API key — what Koroku is, where to get
a key, and a field that stores it in the OS keyring and takes effect without a restart."""

from __future__ import annotations

import asyncio
from typing import Protocol

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.app.config import keyring_backend_name
from koroku_desktop.app.lazy_model import LazyGeminiModel
from koroku_desktop.ui.settings.key import (
    KEY_URL,
    NO_KEYRING_HELP,
    KeyEntry,
    key_problem,
    store_key,
)
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.tasks import TaskSet


class CardHost(Protocol):
    """A window that can show cards above its content (the chat window)."""

    def insert_card(self, card: QWidget) -> None:
        """Show `card` between the header and the content."""
        ...


class ThemedCard(QFrame):
    """A rounded card painted with the current theme (and re-painted when it changes)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("KorokuCard")
        self._restyle()

    def _restyle(self) -> None:
        t = theme.current()
        if getattr(self, "_styled_for", None) is t:
            return  # setStyleSheet itself sends a PaletteChange
        self._styled_for = t
        self.setStyleSheet(
            f"QFrame#KorokuCard {{ background: {t.surface}; border: 1px solid {t.border};"
            f" border-radius: 14px; }}"
            f" QFrame#KorokuCard QLabel {{ background: transparent; color: {t.text}; }}"
            f" QFrame#KorokuCard QLabel#CardTitle {{ font-size: 13pt; font-weight: 600; }}"
            f" QFrame#KorokuCard QLabel#Muted {{ color: {t.muted}; }}"
            f" QFrame#KorokuCard QLabel#FieldError {{ color: {t.danger}; }}"
        )

    def changeEvent(self, event: QEvent) -> None:
        """Follow a theme change (the app palette changes with it)."""
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()
        super().changeEvent(event)


def card_label(text: str, name: str = "") -> QLabel:
    """A wrapped rich-text label for a card."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setOpenExternalLinks(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    if name:
        label.setObjectName(name)
    return label


class SetupCard(ThemedCard):
    """The first-run card: paste a key, stored in the keyring, used at once."""

    key_stored = Signal()

    def __init__(self, model: LazyGeminiModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._tasks = TaskSet()
        col = QVBoxLayout(self)
        col.setContentsMargins(22, 18, 22, 18)
        col.setSpacing(10)
        col.addWidget(card_label("Set up Koroku", "CardTitle"))
        col.addWidget(
            card_label(
                "Koroku is a desktop assistant. It answers with Google's "
                "Gemini, can read and edit files and run commands on this computer — asking "
                "you first — and remembers every conversation, so you can search it later."
            )
        )
        self.intro = card_label(
            "It needs a Gemini API key. Get one for free at "
            f"<a href='{KEY_URL}'>aistudio.google.com/apikey</a> (sign in with a Google "
            "account and choose <i>Create API key</i>), then paste it here:"
        )
        col.addWidget(self.intro)
        entry = KeyEntry("Paste your Gemini API key", "Save key", self.store)
        self.field, self.save_button = entry.field, entry.button
        self.save_button.setObjectName("Primary")
        col.addWidget(entry)
        self.entry = entry
        self.problem = card_label("", "FieldError")
        self.problem.setVisible(False)
        col.addWidget(self.problem)
        self.keyring_note = card_label(NO_KEYRING_HELP, "FieldError")
        col.addWidget(self.keyring_note)
        self.kept_note = card_label(
            "The key is kept in your OS keyring, never in a file. History, memory and "
            "settings work without one.",
            "Muted",
        )
        col.addWidget(self.kept_note)
        self.has_keyring = keyring_backend_name() is not None
        if not self.has_keyring:
            # Honest: nothing to type into. A disabled field that looks enabled sent the key
            # to the chat box once (the click left the focus there).
            self.intro.setText(
                "It needs a Gemini API key. Get one for free at "
                f"<a href='{KEY_URL}'>aistudio.google.com/apikey</a>."
            )
            for widget in (self.field, self.save_button):
                widget.setEnabled(False)
                widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            self.kept_note.setText("History, memory and settings work without a key.")
        entry.setVisible(self.has_keyring)
        self.keyring_note.setVisible(not self.has_keyring)

    def focus_entry(self) -> None:
        """Put the focus in the key field (when there is one to type into)."""
        if self.has_keyring:
            self.field.setFocus(Qt.FocusReason.OtherFocusReason)

    def store(self) -> asyncio.Future[bool]:
        """Store the pasted key and use it now; resolves to success."""
        task = self._tasks.start(self._store(self.field.text()))
        return task

    async def _store(self, value: str) -> bool:
        self.save_button.setEnabled(False)
        try:
            await store_key(self.model, value)
        except Exception as exc:  # shown in words, never raised into Qt
            self.problem.setText(key_problem(exc))
            self.problem.setVisible(True)
            self.save_button.setEnabled(True)
            return False
        self.field.clear()
        self.key_stored.emit()
        return True


def show_setup_if_needed(host: CardHost, model: LazyGeminiModel) -> SetupCard | None:
    """Put the setup card in `host` when no key is configured; it goes once a key is stored."""
    if model.has_key:
        return None
    card = SetupCard(model)

    def done() -> None:
        card.hide()
        card.deleteLater()

    card.key_stored.connect(done)
    host.insert_card(card)
    return card

"""The API key in Settings: where the key in use comes from, storing a new one in the OS
keyring, and "Test connection" — never showing the key itself."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.app.config import (
    KEY_ENV_VARS,
    ApiKey,
    KeyringUnavailable,
    keyring_backend_name,
    resolve_api_key,
    store_api_key,
)
from koroku_desktop.app.lazy_model import LazyGeminiModel
from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)
T = TypeVar("T")

KEY_URL = "https://aistudio.google.com/apikey"
NO_KEYRING_HELP = (
    "No OS keyring is available here, so Koroku cannot store the key safely — and it never "
    "writes it to a plain file. Set GEMINI_API_KEY (or GOOGLE_API_KEY) in your environment "
    "instead, for example in ~/.profile, then log out and in again (or restart Koroku)."
)


def source_text(key: ApiKey | None) -> str:
    """Where the key in use comes from, in words (never the key)."""
    if key is None:
        return f"No API key is set. Get one at <a href='{KEY_URL}'>{KEY_URL}</a>."
    if key.source == "keyring":
        backend = keyring_backend_name() or "OS keyring"
        return f"In use: the key stored in your OS keyring ({backend})."
    return f"In use: the key from the <code>{key.source}</code> environment variable."


async def store_key(model: LazyGeminiModel, value: str) -> ApiKey | None:
    """Store `value` in the keyring and use it from the next request on, without a restart.

    Raises `KeyringUnavailable` (no keyring: nothing is stored anywhere) or `ValueError`.
    """
    await asyncio.to_thread(store_api_key, value)
    key = await asyncio.to_thread(resolve_api_key)
    model.set_api_key(key)
    return key


def key_problem(exc: Exception) -> str:
    """A failed store, in words."""
    if isinstance(exc, KeyringUnavailable):
        return f"The key was not stored: {exc}. {NO_KEYRING_HELP}"
    if isinstance(exc, ValueError):
        return "Paste a key first."
    return f"The key was not stored: {type(exc).__name__}."


class KeyEntry(QWidget):
    """A hidden-text field for a pasted key and the button that stores it (Enter does too)."""

    def __init__(self, placeholder: str, button: str, store: Callable[[], object]) -> None:
        super().__init__()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.field = QLineEdit()
        self.field.setEchoMode(QLineEdit.EchoMode.Password)
        self.field.setPlaceholderText(placeholder)
        self.field.returnPressed.connect(store)
        row.addWidget(self.field, 1)
        self.button = QPushButton(button)
        self.button.clicked.connect(store)
        row.addWidget(self.button)


class ApiKeySection(QGroupBox):
    """Source of the key in use, a field to store a new one, and a connection test.

    `model` holds the key; `model_name` says which model "Test connection" asks.
    """

    key_changed = Signal()

    def __init__(
        self,
        model: LazyGeminiModel,
        model_name: Callable[[], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Gemini API key", parent)
        self.model = model
        self.model_name = model_name
        self._tasks = TaskSet()
        col = QVBoxLayout(self)
        self.source = QLabel(source_text(model.api_key))
        self.source.setOpenExternalLinks(True)
        self.source.setWordWrap(True)
        col.addWidget(self.source)
        self.keyring_note = QLabel(NO_KEYRING_HELP)
        self.keyring_note.setWordWrap(True)
        self.keyring_note.setObjectName("WarnNote")  # styled per theme by the style sheet
        col.addWidget(self.keyring_note)
        entry = KeyEntry("Paste a new key to store it in the OS keyring", "Store key", self.store)
        self.field, self.store_button = entry.field, entry.button
        col.addWidget(entry)
        trow = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self.test)
        trow.addWidget(self.test_button)
        self.result = QLabel("")
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        trow.addWidget(self.result, 1)
        col.addLayout(trow)
        self.refresh()

    def refresh(self) -> None:
        """Show the current source and whether a keyring can be used."""
        self.source.setText(source_text(self.model.api_key))
        has_keyring = keyring_backend_name() is not None
        self.keyring_note.setVisible(not has_keyring)
        self.field.setEnabled(has_keyring)
        self.store_button.setEnabled(has_keyring)
        self.test_button.setEnabled(self.model.api_key is not None)
        if self.model.api_key is None and not has_keyring:
            self.source.setText(f"No API key is set ({', '.join(KEY_ENV_VARS)} are empty).")

    def _keep(self, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        return self._tasks.start(coro)

    def store(self) -> asyncio.Future[bool]:
        """Store the pasted key in the keyring and use it now; resolves to success."""
        return self._keep(self._store(self.field.text()))

    async def _store(self, value: str) -> bool:
        self.store_button.setEnabled(False)
        try:
            await store_key(self.model, value)
        except Exception as exc:  # keyring failures are shown in words
            self.result.setText(key_problem(exc))
            return False
        finally:
            self.store_button.setEnabled(keyring_backend_name() is not None)
        self.field.clear()
        self.result.setText("Stored in the OS keyring; Koroku uses it from the next request on.")
        self.refresh()
        self.key_changed.emit()
        return True

    def test(self) -> asyncio.Future[str]:
        """One cheap request to the chosen model; resolves to the sentence shown."""
        return self._keep(self._test())

    async def _test(self) -> str:
        self.test_button.setEnabled(False)
        self.test_button.setText("Testing…")
        self.result.setText("Asking Gemini…")
        try:
            message = await self.model.check_connection(self.model_name())
        except ModelError as exc:
            message = f"The connection failed: {exc.message}"
        except Exception as exc:  # any other failure, in words
            log.warning("connection test failed", exc_info=True)
            message = f"The connection failed: {type(exc).__name__}: {exc}"
        finally:
            self.test_button.setText("Test connection")
            self.test_button.setEnabled(self.model.api_key is not None)
        self.result.setText(message)
        return message

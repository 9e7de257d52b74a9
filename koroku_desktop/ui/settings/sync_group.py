"""The Settings dialog's "Sync between devices" group: hub URL, password, what syncs, state."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from koroku_desktop.app.config import KeyringUnavailable, Settings, store_sync_password
from koroku_desktop.app.settings_store import overriding_variable
from koroku_desktop.ui.widgets.controls import note_label
from koroku_desktop.ui.widgets.narrow_form import narrow_form

WHAT_SYNCS = (
    "Sync copies your memory to a PostgreSQL database you run (your “hub”) and from there "
    "to your other devices: the conversation, its summaries (compactions), memory-file "
    "edits and attachments. Tool grants and these settings stay on each device. "
    "The hub holds the same data as the log on this computer, so use only a database you "
    "trust. Nothing leaves this machine unless a hub is set here. A hub other than this "
    "computer must use TLS (add ?sslmode=require). A new hub URL applies once saved, a "
    "stored password at once."
)

HUB_URL_EXAMPLE = "postgresql://me@hub.example.org:5432/koroku?sslmode=require"
HUB_URL_TIP = (
    "Your hub's PostgreSQL URL, for example\n"
    f"{HUB_URL_EXAMPLE}\n"
    "(user me, host hub.example.org, port 5432, database koroku).\n"
    "A hub other than this computer must use TLS: add ?sslmode=require.\n"
    "The password is not part of the URL: store it below, in the OS keyring."
)
"""The hub URL field's tooltip: the whole example its short placeholder cannot show (the
full one was cut to "…" in a narrow dialog)."""

STATE_REFRESH_MS = 1000
"""How often an open Settings dialog shows the sync state again."""


class SyncControl(Protocol):
    """The running sync as this group sees it (the runtime's `SyncSwitch`)."""

    def describe(self) -> str:
        """The state in one line."""
        ...

    def retry_now(self) -> None:
        """Try the hub again at once (a password was just stored)."""
        ...

    def url_problem(self, url: str) -> str | None:
        """Why this hub URL would be refused, None when it is fine (or empty)."""
        ...


class SyncGroup(QGroupBox):
    """Hub URL and password (the password goes to the OS keyring only), what syncs, state."""

    def __init__(self, sync: SyncControl | None = None, parent: QWidget | None = None) -> None:
        super().__init__("Sync between devices", parent)
        form = narrow_form(self)
        self.url = QLineEdit()
        self.overridden: str | None = None
        self.url.setPlaceholderText("postgresql://me@host/koroku")
        self.url.setToolTip(HUB_URL_TIP)
        form.addRow("Hub URL", self.url)
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("kept in the OS keyring")  # reads whole at 400 px
        self.password.setToolTip(
            "The hub's password: Store password puts it in the OS keyring, never in a file"
        )
        self.store_button = QPushButton("Store password")
        self.store_button.clicked.connect(self.store_password)
        line.addWidget(self.password, 1)
        line.addWidget(self.store_button)
        form.addRow("Password", row)
        self.note = note_label("")
        form.addRow("", self.note)
        self._sync = sync
        self.state = QLabel(sync.describe() if sync is not None else "Sync: off")
        self.state.setWordWrap(True)  # an error says what to do: it may take two lines
        form.addRow("State", self.state)
        self._refresh = QTimer(self)  # sync runs in its own thread: follow it while shown
        self._refresh.setInterval(STATE_REFRESH_MS)
        self._refresh.timeout.connect(self.show_state)
        about = note_label(WHAT_SYNCS)
        form.addRow("", about)

    def show_state(self) -> None:
        """Show the sync state now (e.g. up to date once a stored password was accepted)."""
        if self._sync is not None:
            self.state.setText(self._sync.describe())

    def showEvent(self, event: QShowEvent) -> None:
        """Follow the sync state while the dialog is open."""
        super().showEvent(event)
        self.show_state()
        if self._sync is not None:
            self._refresh.start()

    def hideEvent(self, event: QHideEvent) -> None:
        """Stop following the state once the dialog is closed."""
        self._refresh.stop()
        super().hideEvent(event)

    def load(self, s: Settings) -> None:
        """Show the settings' values (the URL read-only when the environment sets it) and the
        state now (a saved URL switches sync at once)."""
        self.url.setText(s.sync_url)
        self.show_state()
        self.overridden = overriding_variable("sync_url")
        self.url.setEnabled(self.overridden is None)
        self.url.setToolTip(
            HUB_URL_TIP
            if self.overridden is None
            else f"Set by {self.overridden} in the environment."
        )

    def problem(self) -> str | None:
        """What is wrong with the URL typed (None: fine, empty or set by the environment)."""
        if self.overridden or self._sync is None:  # no sync to switch (a read-only runtime)
            return None
        return self._sync.url_problem(self.url.text())

    def values(self) -> dict[str, Any]:
        """The edited values by setting name."""
        return {} if self.overridden else {"sync_url": self.url.text().strip()}

    def store_password(self) -> None:
        """Put the typed password in the OS keyring and clear the field."""
        secret = self.password.text()
        if not secret:
            self.note.setText("Type the hub password first.")
            return
        try:
            store_sync_password(secret)
        except KeyringUnavailable as exc:
            self.note.setText(f"Not stored: {exc}.")
            return
        finally:
            self.password.clear()
        self.note.setText("Password stored in your OS keyring.")
        if self._sync is not None:
            self._sync.retry_now()

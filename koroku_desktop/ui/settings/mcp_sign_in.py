"""Sign in to the selected HTTP MCP server (OAuth 2.1 in the browser), or out of it.

Shown under the server list for HTTP servers only. *Sign in…* opens the authorization page
in the browser (QDesktopServices; a test injects its own opener) and waits for it to come back
to Koroku's loopback address; *Cancel* stops waiting. The tokens go to the OS keyring.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from koroku_desktop.app.runtime import McpManager, ServerStatus, SignInFailed, UrlOpener
from koroku_desktop.ui.widgets.controls import push_button

NEEDED = "Sign in needed: the server wants a sign-in (no token yet, or its token was refused)."
SIGNED_IN = "Signed in (OAuth); the tokens are in your OS keyring."
MAY_ASK = "If this server asks you to sign in, Koroku opens the page in your browser."
WAITING = "Continue in your browser: Koroku is waiting for the sign-in to come back."


class SignInRow(QWidget):
    """The sign-in state of one HTTP server, with *Sign in…*, *Cancel* and *Sign out*."""

    def __init__(
        self,
        manager: McpManager | None,
        open_url: UrlOpener | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.manager = manager
        self._open_url = open_url
        self.server: str | None = None
        self.task: asyncio.Task[None] | None = None
        self._note = ""
        """The outcome of the last sign-in or sign-out (a failure, a cancel...)..."""
        self._note_server: str | None = None
        """...of this server."""
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        self.state = QLabel("")
        self.state.setWordWrap(True)
        col.addWidget(self.state)
        self.address = QLineEdit()
        self.address.setReadOnly(True)
        self.address.setToolTip("Open this address in your browser to sign in")
        self.address.hide()
        col.addWidget(self.address)
        row = QHBoxLayout()
        self.sign_in_button = push_button(
            "Sign in…", self.sign_in, tip="Open the server's sign-in page in your browser"
        )
        self.cancel_button = push_button("Cancel", self.cancel)
        self.sign_out_button = push_button(
            "Sign out", self.sign_out, tip="Forget this server's tokens (from the OS keyring)"
        )
        for button in (self.sign_in_button, self.cancel_button, self.sign_out_button):
            row.addWidget(button)
        row.addStretch(1)
        col.addLayout(row)
        self.show_server(None)

    @property
    def busy(self) -> bool:
        """A sign-in is waiting for the browser."""
        return self.task is not None and not self.task.done()

    def show_server(self, status: ServerStatus | None) -> None:
        """Follow the selected server (hidden unless it is an enabled HTTP server)."""
        if self.busy:
            return
        http = status is not None and status.transport == "http" and status.enabled
        self.setVisible(http)
        self.server = status.name if status is not None and http else None
        if status is None or not http:
            return
        note = self._note if self._note_server == status.name else ""
        if status.sign_in == "signed in":
            self._note = ""
            text = SIGNED_IN
        else:  # the last attempt's outcome says more than the state
            text = note or (NEEDED if status.sign_in == "sign in needed" else MAY_ASK)
        self.state.setObjectName("FieldError" if text not in (SIGNED_IN, MAY_ASK) else "")
        self.state.style().polish(self.state)
        self.state.setText(text)
        self._buttons(status.sign_in == "signed in")

    def _buttons(self, signed_in: bool) -> None:
        self.sign_in_button.setVisible(not self.busy)
        self.sign_in_button.setText("Sign in again…" if signed_in else "Sign in…")
        self.cancel_button.setVisible(self.busy)
        self.sign_out_button.setVisible(signed_in and not self.busy)

    def _open(self, url: str) -> Awaitable[None] | None:
        """Open the sign-in page; if no browser opens, show its address to copy."""
        if self._open_url is not None:
            return self._open_url(url)
        if not QDesktopServices.openUrl(QUrl(url)):
            self.address.setText(url)
            self.address.show()
        return None

    def sign_in(self) -> asyncio.Task[None] | None:
        """Start signing in to the selected server in the browser (a task; None if none)."""
        if self.manager is None or self.server is None or self.busy:
            return None
        self.address.hide()
        self.state.setObjectName("")
        self.state.style().polish(self.state)
        self.state.setText(WAITING)
        self.task = asyncio.ensure_future(self._sign_in(self.manager, self.server))
        self._buttons(False)
        return self.task

    async def _sign_in(self, manager: McpManager, name: str) -> None:
        self._note, self._note_server = "", name
        try:
            await manager.sign_in(name, self._open)
        except SignInFailed as exc:
            self.state.setObjectName("FieldError")
            text = str(exc)
            self._note = text[:1].upper() + text[1:]
            self.state.setText(self._note)
        except asyncio.CancelledError:
            self._note = "Sign-in cancelled; nothing changed."
            self.state.setText(self._note)
        else:
            self.state.setText(SIGNED_IN)
        finally:
            self.state.style().polish(self.state)
            self.address.hide()
            self.task = None
            self._buttons(self.state.text() == SIGNED_IN)

    def cancel(self) -> None:
        """Stop waiting for the browser."""
        if self.task is not None:
            self.task.cancel()

    def sign_out(self) -> asyncio.Task[None] | None:
        """Forget the selected server's tokens (a task; None if there is no server)."""
        if self.manager is None or self.server is None or self.busy:
            return None
        manager, name = self.manager, self.server

        async def run() -> None:
            self._note_server = name
            with contextlib.suppress(SignInFailed):
                await manager.sign_out(name)
            self._note = "Signed out: the tokens are removed from your OS keyring."
            self.state.setText(self._note)
            self._buttons(False)

        return asyncio.ensure_future(run())

"""One Koroku per user and data dir: a second launch hands its wish to the running one.

The running app listens on a QLocalServer; `koroku` sends `show`, `koroku quick-ask` sends
`quick-ask` (`quick-ask-screen` with `--screen`). The name is derived from the data dir, so
separate KOROKU_HOMEs don't collide.
"""

from __future__ import annotations

import getpass
import hashlib
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

COMMANDS = ("show", "quick-ask", "quick-ask-screen")


def server_name(home: Path) -> str:
    """The local server name for a data dir and user."""
    digest = hashlib.sha1(f"{getpass.getuser()}:{home.resolve()}".encode()).hexdigest()[:16]
    return f"koroku-{digest}"


def send_command(name: str, command: str, timeout_ms: int = 1000) -> bool:
    """Deliver `command` to a running instance; False when none is listening."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(timeout_ms):
        return False
    socket.write(command.encode() + b"\n")
    ok = socket.waitForBytesWritten(timeout_ms)
    socket.waitForReadyRead(timeout_ms)  # the server acknowledges, so nothing is lost
    socket.disconnectFromServer()
    return ok


class SingleInstanceServer(QObject):
    """Listens for commands from later launches and emits them as signals."""

    show_requested = Signal()
    quick_ask_requested = Signal()
    quick_ask_screen_requested = Signal()

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        """Start listening, replacing a stale socket left by a crash."""
        if self._server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)
        return self._server.listen(self.name)

    def close(self) -> None:
        """Stop listening."""
        self._server.close()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket) -> None:
        while socket.canReadLine():
            command = bytes(socket.readLine().data()).decode(errors="replace").strip()
            socket.write(b"ok\n")
            socket.flush()
            if command == "quick-ask":
                self.quick_ask_requested.emit()
            elif command == "quick-ask-screen":
                self.quick_ask_screen_requested.emit()
            elif command == "show":
                self.show_requested.emit()

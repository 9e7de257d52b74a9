"""Opening the SQLite file through Peewee: private file, WAL, one connection per thread."""

from __future__ import annotations

import os
import sqlite3
import threading
import urllib.parse
from pathlib import Path
from typing import Any

from peewee import SqliteDatabase

BUSY_TIMEOUT_ENV = "KOROKU_BUSY_TIMEOUT_S"


def busy_timeout_s() -> float:
    """How long a connection waits for another writer's lock before "database is locked":
    `KOROKU_BUSY_TIMEOUT_S` (the tests lower it), else 5 s. The one place it is read."""
    try:
        value = float(os.environ.get(BUSY_TIMEOUT_ENV, "5"))
    except ValueError:
        return 5.0
    return value if value >= 0 else 5.0


PRAGMAS: tuple[tuple[str, Any], ...] = (
    ("journal_mode", "wal"),
    ("synchronous", "normal"),
)


class KorokuDatabase(SqliteDatabase):
    """A Peewee SQLite database that remembers every per-thread connection it opened.

    Peewee keeps one connection per thread (worker threads of `asyncio.to_thread` included);
    `close_all` closes them all, which plain `close()` (current thread only) cannot.
    """

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        self.read_only = read_only
        timeout = busy_timeout_s()
        busy = ("busy_timeout", int(timeout * 1000))
        if read_only:
            super().__init__(
                read_only_uri(path),
                pragmas=[busy],
                timeout=timeout,
                check_same_thread=False,
                uri=True,
            )
            return
        super().__init__(
            str(path),
            pragmas=[*PRAGMAS, busy],
            timeout=timeout,
            check_same_thread=False,
        )

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection = super()._connect()  # type: ignore[misc]
        with self._opened_lock:
            self._opened.append(conn)
        return conn

    def conn(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        conn: sqlite3.Connection = self.connection()  # type: ignore[no-untyped-call]
        return conn

    def close_all(self) -> None:
        """Close the connections of every thread."""
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self.dispose()


def read_only_uri(path: Path) -> str:
    """The URI that opens `path` without ever writing to it or beside it.

    `mode=ro` still needs the WAL's `-shm` file, which SQLite cannot create on a read-only
    file system or folder; then the file is opened `immutable=1` (changes still in a `-wal`
    file that was never checkpointed are not seen in that case).
    """
    base = "file:" + urllib.parse.quote(str(path.resolve()))
    uri = base + "?mode=ro"
    try:
        probe = sqlite3.connect(uri, uri=True)
        try:
            probe.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        finally:
            probe.close()
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc) and "readonly" not in str(exc):
            return uri  # not about the -shm file: let the real open report it
        return base + "?mode=ro&immutable=1"
    except sqlite3.DatabaseError:
        return uri  # a damaged file: the caller's own queries meet and report the damage
    return uri


def prepare_file(path: Path) -> bool:
    """Create the parent dir (0700) and the data file (0600) if missing; True if created."""
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    os.chmod(path, 0o600)
    return True


def create_private_file(path: Path) -> None:
    """Create an empty file readable by the owner only (for backups)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)

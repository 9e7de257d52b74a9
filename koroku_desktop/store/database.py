"""The one database policy: every connection to a data dir's SQLite file is opened here.

One `KorokuDatabase` per file and mode (Peewee 4's `SqliteDatabase`, which took in what
`playhouse.sqlite_ext.SqliteExtDatabase` was), shared by the event log, its search index and
vectors, the turn lease and the sync ledger (store/data_dir.py): WAL, `synchronous=NORMAL`, and the
busy timeout from one setting (`KOROKU_BUSY_TIMEOUT_S`, 5 s by default). Its connections read
SQLite's errors without trusting their bytes: a message that is not UTF-8 (damaged schema text
quoted in it) is a `DatabaseError`, never a `UnicodeDecodeError`. This is the one module of the
package that imports `sqlite3`.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import urllib.parse
from pathlib import Path
from typing import Any

# Peewee imports psycopg at import time for a PostgreSQL database Koroku never opens through
# it (the sync hub uses psycopg itself): that cost most of a `koroku search` cold start. So
# peewee is imported with psycopg hidden, and psycopg stays importable afterwards.
_hide = "peewee" not in sys.modules and "psycopg" not in sys.modules
if _hide:
    sys.modules["psycopg"] = None  # type: ignore[assignment]
try:
    from peewee import PeeweeException, SqliteDatabase
finally:
    if _hide:
        del sys.modules["psycopg"]

from koroku_desktop.domain.errors import StorageError  # noqa: E402 — after peewee, on purpose

Connection = sqlite3.Connection
Error = sqlite3.Error
DatabaseError = sqlite3.DatabaseError
OperationalError = sqlite3.OperationalError
IntegrityError = sqlite3.IntegrityError
SQL_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, PeeweeException)
"""What a failed statement raises (Peewee wraps sqlite3's errors in its own)."""


def _busy_timeout_s() -> float:
    """How long a statement waits for another writer: `KOROKU_BUSY_TIMEOUT_S`, else 5 s."""
    try:
        value = float(os.environ.get("KOROKU_BUSY_TIMEOUT_S", "5"))
    except ValueError:
        return 5.0
    return value if 0 <= value <= 3600 else 5.0


BUSY_TIMEOUT_S = _busy_timeout_s()
PRAGMAS: tuple[tuple[str, Any], ...] = (
    ("journal_mode", "wal"),
    ("synchronous", "normal"),
    ("busy_timeout", int(BUSY_TIMEOUT_S * 1000)),
)


class UnreadableError(StorageError, sqlite3.DatabaseError):
    """SQLite failed with a message that is not UTF-8: text it quotes (the schema) is damaged."""


def undecodable(exc: UnicodeDecodeError) -> UnreadableError:
    """The database error a `UnicodeDecodeError` from sqlite3 stands for, its text repaired.

    sqlite3 builds an error's message with a strict UTF-8 decode, so a damaged byte in the
    schema text SQLite quotes raises `UnicodeDecodeError` in place of the real error.
    """
    raw = exc.object if isinstance(exc.object, bytes) else bytes(exc.object)
    text = raw.decode("utf-8", errors="replace")
    if "malformed" not in text:
        text = f"malformed database schema ({text})"
    return UnreadableError(text)


class SafeCursor(sqlite3.Cursor):
    """A cursor whose statements raise database errors only (see `undecodable`)."""

    def execute(self, sql: str, parameters: Any = (), /) -> SafeCursor:
        try:
            super().execute(sql, parameters)
        except UnicodeDecodeError as exc:
            raise undecodable(exc) from None
        return self

    def executemany(self, sql: str, parameters: Any, /) -> SafeCursor:
        try:
            super().executemany(sql, parameters)
        except UnicodeDecodeError as exc:
            raise undecodable(exc) from None
        return self

    def executescript(self, script: str, /) -> SafeCursor:
        try:
            super().executescript(script)
        except UnicodeDecodeError as exc:
            raise undecodable(exc) from None
        return self

    # A row that fails to convert (a damaged byte in a text column) leaves sqlite3's statement
    # un-reset: its read transaction stays open on this thread's connection, so every later
    # statement there sees a stale snapshot and its first write fails as "database is
    # locked". A failed fetch therefore closes the cursor, which resets the statement.

    # Each read is a plain try (no context manager): `__next__` runs once per row.

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except (UnicodeDecodeError, sqlite3.Error) as exc:
            raise _read_failed(self, exc) from None

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size if size is not None else self.arraysize)
        except (UnicodeDecodeError, sqlite3.Error) as exc:
            raise _read_failed(self, exc) from None

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except (UnicodeDecodeError, sqlite3.Error) as exc:
            raise _read_failed(self, exc) from None

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except (UnicodeDecodeError, sqlite3.Error) as exc:
            raise _read_failed(self, exc) from None


def _read_failed(cursor: sqlite3.Cursor, exc: Exception) -> Exception:
    """Close `cursor`, whose read of a row failed with `exc`; the database error to raise."""
    cursor.close()
    return undecodable(exc) if isinstance(exc, UnicodeDecodeError) else exc


class SafeConnection(sqlite3.Connection):
    """A connection whose cursors are `SafeCursor`s, `execute` and friends included."""

    def cursor(self, factory: Any = SafeCursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> SafeCursor:
        cursor: SafeCursor = self.cursor()
        return cursor.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> SafeCursor:
        cursor: SafeCursor = self.cursor()
        return cursor.executemany(sql, parameters)

    def executescript(self, script: str, /) -> SafeCursor:
        cursor: SafeCursor = self.cursor()
        return cursor.executescript(script)


def connect(target: str | Path, *, uri: bool = False, autocommit: bool = False) -> Connection:
    """A connection outside the shared database (a backup target, a private watch, doctor's
    read of a damaged file, a file to import): the same timeout and error reading."""
    conn = sqlite3.connect(
        str(target),
        timeout=BUSY_TIMEOUT_S,
        uri=uri,
        check_same_thread=False,
        factory=SafeConnection,
        isolation_level=None if autocommit else "DEFERRED",
    )
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    return conn


class KorokuDatabase(SqliteDatabase):
    """The Peewee database of one file; remembers every per-thread connection it opened.

    Peewee keeps one connection per thread (worker threads of `asyncio.to_thread` included);
    `close_all` closes them all, which plain `close()` (current thread only) cannot.
    """

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        self.path = Path(path)
        self.read_only = read_only
        common: dict[str, Any] = {
            "timeout": BUSY_TIMEOUT_S,
            "check_same_thread": False,
            "factory": SafeConnection,
        }
        if read_only:
            super().__init__(
                read_only_uri(path),
                pragmas=[("busy_timeout", int(BUSY_TIMEOUT_S * 1000))],
                uri=True,
                **common,
            )
            return
        super().__init__(str(path), pragmas=list(PRAGMAS), **common)

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
        probe = connect(uri, uri=True)
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


def backup_to(conn: Connection, target: Path) -> None:
    """Copy the database behind `conn` into the new file `target` (SQLite's backup API)."""
    dest = connect(target)
    try:
        conn.backup(dest)
    finally:
        dest.close()


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

"""What went wrong with the database file, said in one line with the way out.

The store's one error translation: every front end shows these instead of a traceback: a
damaged file (malformed, truncated, a flipped byte in the schema text, a column name or a
row's text), a read-only one, one locked by another process, or a full disk. Messages are
read as SQLite gave them, never trusting their bytes (store/database.py repairs those that are
not UTF-8 before they get here).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from koroku_desktop.store.database import SQL_ERRORS
from koroku_desktop.store.log.event_log import SqliteEventLog
from koroku_desktop.store.log.migrations import MigrationNeeded

DB_ERRORS: tuple[type[Exception], ...] = (*SQL_ERRORS, OSError)
"""What a database failure may be raised as (Peewee wraps sqlite3's errors in its own)."""


class DatabaseUnavailable(Exception):
    """The log cannot be used; the message says why and what to do, in one line."""


def _backups(path: Path) -> list[Path]:
    try:
        return sorted(path.parent.glob(path.name + ".bak-*"))
    except OSError:
        return []


def explain(exc: BaseException, path: Path) -> str | None:
    """A one-line message for a database failure, or None when `exc` is not one.

    The chain of causes is searched too: a failed COMMIT (disk full) surfaces as a failed
    ROLLBACK ("no transaction is active") raised while handling it.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        message = _explain_one(current, path)
        if message is not None:
            return message
        current = current.__cause__ or current.__context__
    return None


_DAMAGE = (
    "malformed",
    "not a database",
    "corrupt",
    "could not decode",  # a row's text that is not UTF-8 (turn_id, writer, ...)
    "no such column",  # a flipped byte in a column's name in the schema text
    "no such table",
    "has no column named",
    "no such index",
)
"""What SQLite says about a damaged file (the migrations wrote every table, column and index,
so one missing later is damage, not a version difference)."""


def _explain_one(exc: BaseException, path: Path) -> str | None:
    text = str(exc).lower()
    if (isinstance(exc, OSError) and exc.errno == errno.ENOSPC) or "disk is full" in text:
        return (
            f"the disk holding {path.parent} is full: nothing already stored was lost, but "
            "nothing new can be saved. Free some space and try again."
        )
    if isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return (
            f"{exc.filename or path.parent} is read-only ({exc.strerror}): Koroku needs to write "
            "there for this command. Fix the permissions or mount, or set KOROKU_HOME to a "
            "writable folder. (`history`, `search` and `export` work read-only.)"
        )
    if not isinstance(exc, SQL_ERRORS):
        return None
    if "locked" in text or "busy" in text:
        return (
            f"the database {path} is locked by another process (another Koroku, or a backup "
            "tool). Try again in a moment."
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return (
            f"the database {path} cannot be written (read-only file or folder: {exc}). Fix the "
            "permissions or mount, or set KOROKU_HOME to a writable folder. (`history`, "
            "`search` and `export` work read-only.)"
        )
    if any(sign in text for sign in _DAMAGE):
        backups = _backups(path)
        extra = f" Backups: {', '.join(b.name for b in backups)}." if backups else ""
        return (
            f"the database {path} is damaged ({exc}). Run `koroku doctor` to check it and "
            f"`koroku doctor --recover` to salvage every readable event.{extra}"
        )
    if "disk i/o" in text or "full" in text:
        return (
            f"the database {path} could not be written ({exc}): is the disk full or failing? "
            "Nothing already stored was lost."
        )
    return None


def _writable(path: Path) -> bool:
    """Whether the file and its folder can be written (False on a read-only mount, even
    for root)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def open_event_log(
    path: Path, *, read_only: bool = False, writer: str | None = None
) -> SqliteEventLog:
    """Open the log; `DatabaseUnavailable` (one line, with the way out) when it cannot be.

    `read_only` (commands that only read): when the file cannot be opened for writing (a
    read-only file system or folder), it is opened without writing anything instead. A normal
    open is tried first because it also folds pending search text, so searches see it all.
    """
    try:
        if read_only and path.is_file() and not _writable(path):
            try:
                return SqliteEventLog(path, read_only=True, writer=writer)
            except MigrationNeeded:
                pass  # try the normal open below, which reports why it cannot write
        return SqliteEventLog(path, writer=writer)
    except DB_ERRORS as exc:
        error: BaseException = exc
        if read_only and path.is_file():
            try:
                return SqliteEventLog(path, read_only=True, writer=writer)
            except MigrationNeeded:
                pass  # an older file must be migrated, which writes: report the first error
            except DB_ERRORS as second:
                error = second
        message = explain(error, path)
        if message is None:
            raise
        raise DatabaseUnavailable(message) from exc

"""The one database policy: one database per file for the log, lease and ledger, and SQLite's
errors read without trusting their bytes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.data_dir import data_dir_for, release
from koroku_desktop.store.database import UnreadableError, connect
from koroku_desktop.store.db_errors import DatabaseUnavailable, open_event_log
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.store.sync_ledger import SqliteSyncLedger


def _schema_not_utf8(db: Path) -> None:
    SqliteEventLog(db).close()
    data = bytearray(db.read_bytes())
    at = data.find(b"AUTOINCREMENT")
    data[at + len("AUTOINCREMEN")] = 0xFF
    db.write_bytes(bytes(data))


def test_the_log_its_lease_and_its_ledger_share_one_database(tmp_path: Path) -> None:
    db = tmp_path / "koroku.db"
    log = SqliteEventLog(db)
    lease = SqliteTurnLock(db, "ask")
    ledger = SqliteSyncLedger(log)
    first = log.database
    try:
        assert lease.try_acquire("c1", "t1") is None
        shared = data_dir_for(db)
        try:
            assert shared.database is log.database
            assert shared.vectors() is log.vectors, "the data dir makes the vectors, once"
            assert shared.index() is log.index
        finally:
            release(shared)
    finally:
        ledger.close()
        lease.close()
        log.close()
    reopened = data_dir_for(db)
    try:
        assert reopened.database is not first, "the last user closed it"
    finally:
        release(reopened)


def test_an_error_message_that_is_not_utf8_is_a_database_error(tmp_path: Path) -> None:
    db = tmp_path / "koroku.db"
    _schema_not_utf8(db)
    with pytest.raises(UnicodeDecodeError):  # what plain sqlite3 does with such a file
        sqlite3.connect(db).execute("SELECT seq FROM events").fetchall()
    conn = connect(db)
    try:
        with pytest.raises(UnreadableError, match="malformed database schema"):
            conn.execute("SELECT seq FROM events")
    finally:
        conn.close()


def test_opening_a_log_with_damaged_schema_text_says_one_line_with_the_way_out(
    tmp_path: Path,
) -> None:
    db = tmp_path / "koroku.db"
    _schema_not_utf8(db)
    with pytest.raises(DatabaseUnavailable) as caught:
        open_event_log(db)
    message = str(caught.value)
    assert "damaged" in message and "koroku doctor --recover" in message
    assert "\n" not in message
    with pytest.raises(DatabaseUnavailable):
        open_event_log(db, read_only=True)


def test_a_row_that_fails_to_read_leaves_no_stale_snapshot_behind(tmp_path: Path) -> None:
    """A damaged text value fails its fetch; the connection must not keep that statement's
    read transaction open, or its next write (after another writer's) fails as "locked"."""
    db = tmp_path / "koroku.db"
    with sqlite3.connect(db) as setup:
        setup.execute("PRAGMA journal_mode=wal")
        setup.execute("CREATE TABLE t (v TEXT)")
        setup.execute("INSERT INTO t VALUES (CAST(x'ff61' AS TEXT))")
    reader = connect(db, autocommit=True)
    other = connect(db, autocommit=True)
    whole, one = reader.execute("SELECT v FROM t"), reader.execute("SELECT v FROM t")
    with pytest.raises(sqlite3.OperationalError, match="Could not decode"):
        whole.fetchall()
    with pytest.raises(sqlite3.OperationalError, match="Could not decode"):
        next(one)
    other.execute("CREATE TABLE u (x)")  # another writer moves the database on
    reader.execute("INSERT INTO u VALUES (1)")  # sees it: no stale snapshot, no "locked"
    assert reader.execute("SELECT count(*) FROM u").fetchone() == (1,)
    assert [r for (r,) in reader.execute("SELECT 1 UNION SELECT 2")] == [1, 2]
    del whole, one  # (kept alive until here, as a caller's cursor would be)
    reader.close()
    other.close()

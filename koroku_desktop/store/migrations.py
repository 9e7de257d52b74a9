"""Numbered schema migrations, recorded in `schema_migrations`; the list is append-only.

Before any pending migration runs on an existing non-empty database, the file is copied with
SQLite's backup API to `<db>.bak-<yyyymmdd-HHMMSS>` (mode 0600). A fresh file gets no backup.
Never edit or reorder a migration that has shipped: add a new one.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.store.database import KorokuDatabase, create_private_file
from koroku_desktop.store.rows import COLUMNS, parse_row
from koroku_desktop.store.searchable import searchable_text

log = logging.getLogger(__name__)

BACKFILL_BATCH = 5000


@dataclass(frozen=True)
class Migration:
    """One schema step: a stable name (`mNNN_what`) and the function that applies it."""

    name: str
    apply: Callable[[sqlite3.Connection], None]


def _m001_events(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            schema_version INTEGER NOT NULL,
            payload TEXT NOT NULL,
            created_at REAL NOT NULL
        )"""
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS events_conversation_kind_seq"
        " ON events (conversation_id, kind, seq)"
    )


def _m002_fts(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5("
        "body, tokenize = 'unicode61 remove_diacritics 2')"
    )
    # Index what earlier versions wrote; damaged rows have no searchable text.
    after = 0
    while True:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, BACKFILL_BATCH),
        ).fetchall()
        if not rows:
            return
        after = rows[-1][0]
        texts = []
        for row in rows:
            entry = parse_row(row)
            if isinstance(entry, StoredEvent) and (text := searchable_text(entry.event)):
                texts.append((entry.seq, text))
        conn.executemany("INSERT INTO events_fts (rowid, body) VALUES (?, ?)", texts)


def _m003_fts_pending(conn: sqlite3.Connection) -> None:
    # Search text waiting to be folded into events_fts (see store/search_index.py).
    conn.execute(
        "CREATE TABLE IF NOT EXISTS events_fts_pending ("
        "seq INTEGER PRIMARY KEY, body TEXT NOT NULL)"
    )


def _m004_vectors(conn: sqlite3.Connection) -> None:
    # Embeddings of the log (see store/vectors.py): one space per model and dimensionality.
    conn.execute(
        "CREATE TABLE IF NOT EXISTS vector_spaces ("
        "id INTEGER PRIMARY KEY, model TEXT NOT NULL, dims INTEGER NOT NULL,"
        " done_seq INTEGER NOT NULL, created_at REAL NOT NULL, UNIQUE (model, dims))"
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS event_vectors ("
        "space INTEGER NOT NULL, seq INTEGER NOT NULL, chunk INTEGER NOT NULL,"
        " scale REAL NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (space, seq, chunk))"
    )


MIGRATIONS: tuple[Migration, ...] = (
    Migration("m001_events", _m001_events),
    Migration("m002_fts", _m002_fts),
    Migration("m003_fts_pending", _m003_fts_pending),
    Migration("m004_vectors", _m004_vectors),
)


def _applied(conn: sqlite3.Connection) -> set[str]:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return set()
    return {name for (name,) in conn.execute("SELECT name FROM schema_migrations")}


def _is_empty(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None


def backup(conn: sqlite3.Connection, db_path: Path) -> Path:
    """Copy the live database to `<db>.bak-<yyyymmdd-HHMMSS>` (0600) with the backup API."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = db_path.with_name(f"{db_path.name}.bak-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = db_path.with_name(f"{db_path.name}.bak-{stamp}-{n}")
    create_private_file(target)
    dest = sqlite3.connect(target)
    try:
        conn.backup(dest)
    finally:
        dest.close()
    return target


def migrate(db: KorokuDatabase, db_path: Path) -> list[str]:
    """Run every pending migration in order, each in its own transaction; return their names.

    Safe when two processes start at once: each step re-checks under the write lock.
    """
    conn = db.conn()
    pending = [m for m in MIGRATIONS if m.name not in _applied(conn)]
    if not pending:
        return []
    if not _is_empty(conn):
        target = backup(conn, db_path)
        log.info("backed up %s to %s before migrating", db_path, target)
    ran: list[str] = []
    for migration in pending:
        with db.atomic("IMMEDIATE"):
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
            )
            if migration.name in _applied(conn):
                continue
            migration.apply(conn)
            conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (migration.name, time.time()),
            )
        ran.append(migration.name)
        log.info("applied migration %s", migration.name)
    return ran

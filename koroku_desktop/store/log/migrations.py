"""Numbered schema migrations, recorded in `schema_migrations`; the list is append-only.

Before any pending migration runs on an existing non-empty database, the file is copied with
SQLite's backup API to `<db>.bak-<yyyymmdd-HHMMSS>` (mode 0600). A fresh file gets no backup.
Never edit or reorder a migration that has shipped: add a new one.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.domain.ids import legacy_id
from koroku_desktop.store.database import Connection, KorokuDatabase, connect, create_private_file
from koroku_desktop.store.log import coverage_index
from koroku_desktop.store.log.order import ORDER_KEY
from koroku_desktop.store.log.rows import decode_payload, parse_row
from koroku_desktop.store.search import context as search_context
from koroku_desktop.store.search.searchable import searchable_text

log = logging.getLogger(__name__)

BACKFILL_BATCH = 5000
_M001_COLUMNS = "seq, conversation_id, kind, schema_version, CAST(payload AS BLOB), created_at"
"""The columns `events` had before m004 (what m002 may read)."""
LEGACY_WRITER = "legacy"
"""The `writer` of rows written before m004 (front end and host unknown)."""


@dataclass(frozen=True)
class Migration:
    """One schema step: a stable name (`mNNN_what`) and the function that applies it."""

    name: str
    apply: Callable[[Connection], None]


def _batches(conn: Connection, columns: str) -> Iterator[list[Any]]:
    """The rows of `events` (`columns`, seq first) in seq order, BACKFILL_BATCH at a time.

    Each batch is read only after the caller is done with the one before, so a backfill may
    write to the table between batches.
    """
    after = 0
    while True:
        rows = conn.execute(
            f"SELECT {columns} FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, BACKFILL_BATCH),
        ).fetchall()
        if not rows:
            return
        after = rows[-1][0]
        yield rows


def _m001_events(conn: Connection) -> None:
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


def _m002_fts(conn: Connection) -> None:
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5("
        "body, tokenize = 'unicode61 remove_diacritics 2')"
    )
    # Index what earlier versions wrote; damaged rows have no searchable text.
    for rows in _batches(conn, _M001_COLUMNS):
        texts = []
        for row in rows:
            entry = parse_row(row)
            if isinstance(entry, StoredEvent) and (text := searchable_text(entry.event)):
                texts.append((entry.seq, text))
        conn.executemany("INSERT INTO events_fts (rowid, body) VALUES (?, ?)", texts)


def _m003_fts_pending(conn: Connection) -> None:
    # Search text waiting to be folded into events_fts (see store/search/index.py).
    conn.execute(
        "CREATE TABLE IF NOT EXISTS events_fts_pending ("
        "seq INTEGER PRIMARY KEY, body TEXT NOT NULL)"
    )


def _starts_turn(kind: str, payload: object) -> bool:
    """Whether an old row begins a turn: a user message that answers no call, or a boundary."""
    if kind != "message":
        return True
    try:
        data = json.loads(payload if isinstance(payload, str | bytes) else "")
    except ValueError:
        return True
    if not isinstance(data, dict) or data.get("role") != "user":
        return False
    parts = data.get("parts")
    return not (
        isinstance(parts, list)
        and any(isinstance(p, dict) and p.get("kind") == "function_response" for p in parts)
    )


def _m004_event_ids(conn: Connection) -> None:
    # Every event gets a globally unique id, its turn's id and its writer (domain/ids.py).
    # Old rows get deterministic ids (legacy_id) and turns rebuilt from the message order:
    # a real user message (or a boundary) opens a turn, what follows belongs to it. This
    # backfill of new columns is the one place rows of `events` are ever rewritten.
    for column in ("event_id", "turn_id", "writer"):
        conn.execute(f"ALTER TABLE events ADD COLUMN {column} TEXT")
    turns: dict[str, str] = {}
    columns = "seq, conversation_id, kind, CAST(payload AS BLOB), created_at"
    for rows in _batches(conn, columns):
        updates = []
        for seq, conversation_id, kind, raw, created_at in rows:
            payload = decode_payload(raw)  # bad UTF-8 must not stop the migration
            try:
                when = float(created_at)
            except (TypeError, ValueError):
                when = 0.0
            event_id = legacy_id(when, seq, payload)
            if _starts_turn(str(kind), payload) or conversation_id not in turns:
                turns[conversation_id] = event_id
            updates.append((event_id, turns[conversation_id], LEGACY_WRITER, seq))
        conn.executemany(
            "UPDATE events SET event_id = ?, turn_id = ?, writer = ? WHERE seq = ?", updates
        )
    conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS events_event_id ON events (event_id)")


def _m005_turn_leases(conn: Connection) -> None:
    # The cross-process writer lock of each conversation (store/local_lease.py).
    conn.execute(
        """CREATE TABLE IF NOT EXISTS turn_leases (
            conversation_id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            front_end TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            turn_id TEXT NOT NULL,
            acquired_at REAL NOT NULL,
            expires_at REAL NOT NULL
        )"""
    )


def _m006_vectors(conn: Connection) -> None:
    # Embeddings of the log (see store/vectors/store.py): one space per model and dimensionality.
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


def _m007_sync_hub_order(conn: Connection) -> None:
    # Sync through a PostgreSQL hub (koroku_desktop/sync/): each event's position in the
    # hub's order (NULL: not pushed yet) and the hub this log syncs with. Entries are read in
    # ORDER_KEY order: synced events by hub order, then unsynced ones by seq (store/log/order.py).
    # hub_seq is bookkeeping set once per row (on push or pull); the event itself never changes.
    conn.execute("ALTER TABLE events ADD COLUMN hub_seq INTEGER")
    conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS events_hub_seq ON events (hub_seq)")
    conn.execute(f"CREATE INDEX IF NOT EXISTS events_order ON events ({ORDER_KEY})")
    conn.execute(
        "CREATE INDEX IF NOT EXISTS events_conversation_order"
        f" ON events (conversation_id, {ORDER_KEY})"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS events_conversation_kind_order"
        f" ON events (conversation_id, kind, {ORDER_KEY})"
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS sync_state (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
    )


def _m008_coverage(conn: Connection) -> None:
    # What compactions cover, kept queryable (store/log/coverage_index.py): derived tables a
    # trigger fills from every compaction row inserted, filled here for the rows before it,
    # then each compaction's first live seq, in written order (each from its base's).
    for statement in (*coverage_index.SCHEMA, coverage_index.TRIGGER, *coverage_index.BACKFILL):
        conn.execute(statement)
    heads = conn.execute(
        "SELECT e.conversation_id, e.event_id FROM events AS e JOIN compaction_links AS c"
        " ON c.event_id = e.event_id WHERE e.kind = 'compaction' AND c.by_id ORDER BY e.seq"
    ).fetchall()
    coverage_index.note_live_starts(conn, [(str(c), str(e)) for c, e in heads])


def _m009_context_search(conn: Connection) -> None:
    # The keyword leg's stemmed index of messages with their context (store/search/context.py),
    # filled from the log by whichever process searches next.
    for statement in search_context.SCHEMA:
        conn.execute(statement)


MIGRATIONS: tuple[Migration, ...] = (
    Migration("m001_events", _m001_events),
    Migration("m002_fts", _m002_fts),
    Migration("m003_fts_pending", _m003_fts_pending),
    Migration("m004_event_ids", _m004_event_ids),
    Migration("m005_turn_leases", _m005_turn_leases),
    Migration("m006_vectors", _m006_vectors),
    Migration("m007_sync_hub_order", _m007_sync_hub_order),
    Migration("m008_coverage", _m008_coverage),
    Migration("m009_context_search", _m009_context_search),
)


class MigrationNeeded(RuntimeError):
    """A read-only open met a file that must be migrated first (which writes)."""


def pending_migrations(conn: Connection) -> list[str]:
    """Names of the migrations not yet applied to this file, in order."""
    applied = _applied(conn)
    return [m.name for m in MIGRATIONS if m.name not in applied]


def _applied(conn: Connection) -> set[str]:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return set()
    return {name for (name,) in conn.execute("SELECT name FROM schema_migrations")}


def _is_empty(conn: Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None


def backup(conn: Connection, db_path: Path) -> Path:
    """Copy the live database to `<db>.bak-<yyyymmdd-HHMMSS>` (0600) with the backup API."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = db_path.with_name(f"{db_path.name}.bak-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = db_path.with_name(f"{db_path.name}.bak-{stamp}-{n}")
    create_private_file(target)
    dest = connect(target)
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

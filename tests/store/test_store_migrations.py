"""Migrations: recorded once, append-only, and a backup before touching an existing file."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import uuid
from pathlib import Path

import pytest

from koroku_desktop.domain.events import MessageEvent, StoredEvent, dump_event
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.log.migrations import MIGRATIONS


def backups(db_path: Path) -> list[Path]:
    return sorted(db_path.parent.glob(db_path.name + ".bak-*"))


def applied(db_path: Path) -> list[str]:
    conn = sqlite3.connect(db_path)
    try:
        return [n for (n,) in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    finally:
        conn.close()


def test_fresh_file_runs_all_migrations_without_backup(db_path: Path) -> None:
    with SqliteEventLog(db_path) as log:
        assert log.migrations_run == [m.name for m in MIGRATIONS]
    assert applied(db_path) == [m.name for m in MIGRATIONS]
    assert backups(db_path) == []


def test_reopening_runs_nothing(db_path: Path) -> None:
    SqliteEventLog(db_path).close()
    with SqliteEventLog(db_path) as log:
        assert log.migrations_run == []
    assert backups(db_path) == []


def test_migration_names_are_numbered_and_unique() -> None:
    names = [m.name for m in MIGRATIONS]
    assert len(set(names)) == len(names)
    assert [n[:4] for n in names] == [f"m{i:03d}" for i in range(1, len(names) + 1)]


def test_pending_migration_backs_up_existing_file_and_backfills_fts(db_path: Path) -> None:
    # A database from a version that had only m001: events but no search index.
    with SqliteEventLog(db_path) as log:
        log.append("c1", [MessageEvent(role="user", parts=[TextPart(text="pelican")])])
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("DROP TABLE events_fts")
        conn.execute("DELETE FROM schema_migrations WHERE name = 'm002_fts'")
        conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
            " VALUES ('c1', 'message', 1, ?, 0)",
            (json.dumps(dump_event(MessageEvent(role="model", parts=[TextPart(text="heron")]))),),
        )
    conn.close()

    with SqliteEventLog(db_path) as log:
        assert log.migrations_run == ["m002_fts"]
        assert [h.snippet for h in log.search("heron")] == ["[[heron]]"]
        assert len(log.search("pelican")) == 1
    (bak,) = backups(db_path)
    assert stat.S_IMODE(os.stat(bak).st_mode) == 0o600
    old = sqlite3.connect(bak)
    try:
        assert old.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 2
        assert old.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert not old.execute("SELECT 1 FROM sqlite_master WHERE name = 'events_fts'").fetchone()
    finally:
        old.close()
    assert applied(db_path) == [m.name for m in MIGRATIONS]


def _old_database(path: Path) -> None:
    """A database as Koroku wrote it before m004: no id columns, ids unknown."""
    from koroku_desktop.store.log import migrations

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at REAL)")
        for m in migrations.MIGRATIONS[:3]:
            m.apply(conn)
            conn.execute("INSERT INTO schema_migrations VALUES (?, 0)", (m.name,))
        rows = [
            ("message", {"role": "user", "parts": [{"kind": "text", "text": "q1"}]}),
            ("message", {"role": "model", "parts": [{"kind": "function_call", "name": "ls"}]}),
            (
                "message",
                {"role": "user", "parts": [{"kind": "function_response", "name": "ls"}]},
            ),
            ("message", {"role": "model", "parts": [{"kind": "text", "text": "a1"}]}),
            ("message", {"role": "user", "parts": [{"kind": "text", "text": "q2"}]}),
            ("message", {"role": "model", "parts": [{"kind": "text", "text": "a2"}]}),
            ("cleared", {}),
        ]
        for n, (kind, payload) in enumerate(rows):
            conn.execute(
                "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
                " VALUES ('default', ?, 1, ?, ?)",
                (kind, json.dumps(payload), 1_700_000_000 + n),
            )
        conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
            " VALUES ('default', 'message', 1, 'not json', 0)"
        )
    conn.close()


def test_m004_backfills_deterministic_ids_turns_and_writer(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "koroku.db", tmp_path / "b" / "koroku.db"
    _old_database(first)
    _old_database(second)
    with SqliteEventLog(first) as log:
        assert log.migrations_run == [
            "m004_event_ids",
            "m005_turn_leases",
            "m006_vectors",
            "m007_sync_hub_order",
            "m008_coverage",
            "m009_context_search",
        ]
        entries = log.entries("default")
    assert len(backups(first)) == 1
    stored = [e for e in entries if isinstance(e, StoredEvent)]
    assert len(stored) == 7 and len(entries) == 8
    ids = [e.event_id for e in stored]
    assert len(set(ids)) == 7 and all(uuid.UUID(i).version == 7 for i in ids)
    turns = [e.turn_id for e in stored]
    # q1 opens a turn the call, its response and a1 belong to; q2 opens the next; the clear
    # is a turn of its own.
    assert turns == [ids[0]] * 4 + [ids[4]] * 2 + [ids[6]]
    assert {e.writer for e in stored} == {"legacy"}
    with SqliteEventLog(second) as again:
        assert [e.event_id for e in again.entries("default") if isinstance(e, StoredEvent)] == ids
    conn = sqlite3.connect(first)
    try:
        nulls = conn.execute("SELECT COUNT(*) FROM events WHERE event_id IS NULL").fetchone()[0]
        assert nulls == 0, "the damaged row got an id too"
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                "INSERT INTO events (conversation_id, kind, schema_version, payload,"
                " created_at, event_id) VALUES ('x', 'cleared', 1, '{}', 0, ?)",
                (ids[0],),
            )
    finally:
        conn.close()

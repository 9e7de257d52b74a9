"""Migrations: recorded once, append-only, and a backup before touching an existing file."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

from koroku_desktop.domain.events import MessageEvent, dump_event
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store.event_log import SqliteEventLog
from koroku_desktop.store.migrations import MIGRATIONS


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
    assert applied(db_path) == ["m001_events", "m002_fts", "m003_fts_pending", "m004_vectors"]
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
    assert applied(db_path) == ["m001_events", "m002_fts", "m003_fts_pending", "m004_vectors"]

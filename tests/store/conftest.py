"""Fixtures for the store contract suite: a real SQLite file in tmp_path."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from koroku_desktop.store import SqliteEventLog


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test's database lives (the parent dir does not exist yet)."""
    return tmp_path / "data" / "koroku.db"


@pytest.fixture
def log(db_path: Path) -> Iterator[SqliteEventLog]:
    """An open event log on a fresh file, closed after the test."""
    event_log = SqliteEventLog(db_path)
    yield event_log
    event_log.close()


RawInsert = Callable[..., int]


@pytest.fixture
def raw_insert(db_path: Path) -> RawInsert:
    """Insert a row with plain sqlite3, bypassing the store (to plant damaged rows)."""

    def insert(
        payload: str,
        *,
        kind: str = "message",
        conversation_id: str = "c1",
        schema_version: int = 1,
    ) -> int:
        conn = sqlite3.connect(db_path)
        try:
            with conn:
                cursor = conn.execute(
                    "INSERT INTO events (conversation_id, kind, schema_version, payload,"
                    " created_at) VALUES (?, ?, ?, ?, 0)",
                    (conversation_id, kind, schema_version, payload),
                )
            return int(cursor.lastrowid or 0)
        finally:
            conn.close()

    return insert

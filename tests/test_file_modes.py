"""Every file and folder Koroku creates in the data dir is private: 0600 files, 0700 folders."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from koroku_desktop.agent.memory import append_memory
from koroku_desktop.app.config import default_paths
from koroku_desktop.app.exports import export_file
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The usual desktop umask (0022), under which default modes are world-readable."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("open_umask")
def test_data_dir_folders_memory_backups_and_exports_are_owner_only(koroku_home: Path) -> None:
    paths = default_paths()
    with SqliteEventLog(paths.db) as log:
        log.append("c", [MessageEvent(role="user", parts=[TextPart(text="private")])])
    # A database from an older version (one migration pending): opening backs it up first.
    with sqlite3.connect(paths.db) as conn:
        conn.execute("DROP TABLE events_fts_pending")
        conn.execute("DELETE FROM schema_migrations WHERE name = 'm003_fts_pending'")
    with SqliteEventLog(paths.db) as log:
        assert log.migrations_run == ["m003_fts_pending"]
        export_file(log, "c", "json", False, paths.home / "exports" / "log.json")
    memory = append_memory(paths.home, "a private summary", datetime(2026, 1, 2, 3, 4))
    created = [p for p in paths.home.rglob("*")]
    assert memory in created and any(".bak-" in p.name for p in created)
    for path in [paths.home, *created]:
        expected = 0o700 if path.is_dir() else 0o600
        assert _mode(path) == expected, f"{path.relative_to(paths.home)}: {oct(_mode(path))}"


@pytest.mark.usefixtures("open_umask")
def test_existing_loose_folders_are_tightened(koroku_home: Path) -> None:
    for name in ("memory", "tools"):
        (koroku_home / name).mkdir(parents=True, mode=0o755)
        os.chmod(koroku_home / name, 0o755)
    paths = default_paths()
    assert _mode(paths.memory) == 0o700 and _mode(paths.tools) == 0o700

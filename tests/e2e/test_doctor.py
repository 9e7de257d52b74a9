"""`koroku doctor` on a real corrupted and a real truncated file: check, then salvage."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from tests.e2e.conftest import Koroku

PAGE = 4096
EVENTS = 400


def _seed(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    with SqliteEventLog(home / "koroku.db") as log:
        for n in range(EVENTS):
            role = "user" if n % 2 == 0 else "model"
            text = f"event {n} " + "words " * 120
            log.append("default", [MessageEvent(role=role, parts=[TextPart(text=text)])])
    with sqlite3.connect(home / "koroku.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (home / "koroku.db.bak-20260101-120000").write_bytes(b"an old backup")


def test_healthy_database_is_reported_ok(koroku: Koroku) -> None:
    _seed(koroku.home)
    result = koroku.run("doctor")
    assert result.returncode == 0, result.stderr
    assert "integrity check: ok" in result.stdout
    assert f"events: {EVENTS:,} good, 0 damaged" in result.stdout
    assert "koroku.db.bak-20260101-120000" in result.stdout


def test_corrupted_pages_are_reported_and_every_readable_event_recovered(
    koroku: Koroku,
) -> None:
    _seed(koroku.home)
    db = koroku.home / "koroku.db"
    pages = db.stat().st_size // PAGE
    with db.open("r+b") as fh:  # garbage over a few pages in the middle of the file
        for page in range(pages // 3, pages // 3 + 4):
            fh.seek(page * PAGE)
            fh.write(os.urandom(PAGE))
    check = koroku.run("doctor")
    assert check.returncode == 1, check.stdout
    assert "integrity check: ok" not in check.stdout
    assert "koroku doctor --recover" in check.stderr
    assert "koroku.db.bak-20260101-120000" in check.stdout

    fixed = koroku.run("doctor", "--recover")
    assert fixed.returncode == 0, fixed.stderr
    assert "recovered" in fixed.stdout and "kept as" in fixed.stdout
    kept = [
        p for p in koroku.home.glob("koroku.db.damaged-*") if p.name[-4:] not in ("-wal", "-shm")
    ]
    assert kept and kept[0].stat().st_size > 0
    again = koroku.run("doctor")
    assert again.returncode == 0, again.stdout
    assert "integrity check: ok" in again.stdout
    history = koroku.run("history", "--all", "--json")
    assert history.returncode == 0, history.stderr
    recovered = history.stdout.count('"seq"')
    assert 0 < recovered <= EVENTS
    assert "event 0 " in history.stdout and f"event {EVENTS - 1} " in history.stdout
    search = koroku.run("search", "event")
    assert search.returncode == 0, search.stderr
    # Recovered events keep their global ids (what a later sync merges on).
    with sqlite3.connect(kept[0]) as before, sqlite3.connect(koroku.home / "koroku.db") as after:
        after_ids = dict(after.execute("SELECT seq, event_id FROM events").fetchall())
        sample = before.execute("SELECT seq, event_id FROM events WHERE seq <= 20").fetchall()
    assert sample and all(after_ids.get(seq) == event_id for seq, event_id in sample)


def test_truncated_file_keeps_what_precedes_the_cut(koroku: Koroku) -> None:
    _seed(koroku.home)
    db = koroku.home / "koroku.db"
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size // 2)
    check = koroku.run("doctor")
    assert check.returncode == 1
    fixed = koroku.run("doctor", "--recover")
    assert fixed.returncode == 0, fixed.stderr
    history = koroku.run("history", "--all", "--json")
    assert history.returncode == 0, history.stderr
    assert 0 < history.stdout.count('"seq"') < EVENTS
    assert os.stat(db).st_mode & 0o777 == 0o600

"""A corpus of damaged databases: every command says one line with `koroku doctor`'s way out,
and `doctor --recover` leaves a healthy data dir.

Each case flips bytes in a real log file where bit rot would: the schema text (so SQLite's own
error message is not UTF-8), a column name in the lease table and in the coverage table, an
index page, a payload and a `turn_id` value. Before anything runs, the damage is shown to break
plain sqlite3 the way the issue saw it, so the test cannot pass on a harmless flip.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini

PAGE = 4096


def _seed(db: Path) -> None:
    """Two whole turns (a question and its answer each), written and checkpointed."""
    with SqliteEventLog(db) as log:
        for n in range(2):
            log.append(
                "default",
                [
                    MessageEvent(role="user", parts=[TextPart(text=f"zebra question {n}")]),
                    MessageEvent(role="model", parts=[TextPart(text=f"zebra answer {n}")]),
                ],
            )
        log.search("zebra")  # folds the pending search text into the index
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _flip(db: Path, find: bytes, offset: int, value: int) -> None:
    data = bytearray(db.read_bytes())
    at = data.find(find)
    assert at >= 0, find
    data[at + offset] = value
    db.write_bytes(bytes(data))


def _raw_error(db: Path, sql: str) -> BaseException:
    try:
        sqlite3.connect(db).execute(sql).fetchall()
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        return exc
    raise AssertionError(f"the damage does not show: {sql}")


def schema_text(db: Path) -> None:
    """A byte of the events table's schema text becomes 0xff, inside a keyword."""
    _flip(db, b"AUTOINCREMENT", len("AUTOINCREMEN"), 0xFF)
    assert isinstance(_raw_error(db, "SELECT seq FROM events"), UnicodeDecodeError)


def lease_column(db: Path) -> None:
    """`expires_at` of the lease table's schema text becomes `expires_ax`."""
    _flip(db, b"expires_at", len("expires_a"), ord("x"))
    assert "no such column: expires_at" in str(_raw_error(db, "SELECT expires_at FROM turn_leases"))


def coverage_column(db: Path) -> None:
    """`compaction_id` of the coverage table's schema text loses a letter to a flipped bit."""
    data = db.read_bytes()
    table = data.find(b"CREATE TABLE coverage")
    at = data.find(b"compaction_id", table)
    _flip(db, data[table:at] + b"compaction_id", at - table + 3, ord("q"))
    error = _raw_error(db, "SELECT compaction_id FROM coverage")
    assert "no such column: compaction_id" in str(error)


def index_page(db: Path) -> None:
    """Garbage over the middle of the (conversation, kind, seq) index's page."""
    with sqlite3.connect(db) as conn:
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'events_conversation_kind_seq'"
        ).fetchone()
    data = bytearray(db.read_bytes())
    start = (root - 1) * PAGE
    data[start + 8 : start + PAGE - 8] = bytes([0xA5]) * (PAGE - 16)
    db.write_bytes(bytes(data))
    try:
        with sqlite3.connect(db) as conn:
            verdict = conn.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        verdict = str(exc)
    assert verdict != "ok"


def payload(db: Path) -> None:
    """The quote opening a payload's text becomes 0xff: not UTF-8, not JSON."""
    _flip(db, b'"text":"zebra answer 0', len('"text":'), 0xFF)
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT CAST(payload AS BLOB) FROM events").fetchall()
    assert sum(1 for (p,) in rows if b"\xffzebra answer 0" in p) == 1


def turn_id(db: Path) -> None:
    """The first byte of an answer's `turn_id` (right after its event id) becomes 0xff."""
    with sqlite3.connect(db) as conn:
        event_id, turn = conn.execute(
            "SELECT event_id, turn_id FROM events WHERE turn_id != event_id LIMIT 1"
        ).fetchone()
    _flip(db, (event_id + turn).encode(), len(event_id), 0xFF)
    assert "Could not decode" in str(_raw_error(db, "SELECT turn_id FROM events"))


CASES: list[Callable[[Path], None]] = [
    schema_text,
    lease_column,
    coverage_column,
    index_page,
    payload,
    turn_id,
]


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


def _works_or_points_to_doctor(result: subprocess.CompletedProcess[str]) -> None:
    """Exit 0, or exit 1 with one line naming the damage and `koroku doctor`."""
    _no_traceback(result)
    if result.returncode == 0:
        return
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert len(lines) == 1, result.stderr
    assert "damaged" in lines[0] and "koroku doctor" in lines[0], lines[0]


def _kept_aside(home: Path) -> list[Path]:
    return [p for p in home.glob("koroku.db.damaged-*") if not p.name.endswith(("-wal", "-shm"))]


def _damaged_home(koroku: Koroku, damage: Callable[[Path], None]) -> Path:
    db = koroku.home / "koroku.db"
    koroku.home.mkdir(parents=True, exist_ok=True)
    _seed(db)
    damage(db)
    return db


# Each case runs a dozen real `koroku` processes: on a loaded 2-core machine that is minutes.


@pytest.mark.parametrize("damage", CASES, ids=[c.__name__ for c in CASES])
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_command_works_or_says_one_line_with_the_way_out(
    koroku: Koroku, fake_gemini: FakeGemini, damage: Callable[[Path], None]
) -> None:
    _damaged_home(koroku, damage)
    for command in (
        ["history"],
        ["history", "--all"],
        ["search", "zebra"],
        ["ask", "hello"],
        ["conversations"],
        ["ask", "-c", "default", "hello"],
    ):
        _works_or_points_to_doctor(koroku.run(*command))
    _works_or_points_to_doctor(koroku.run("chat", stdin="hello\nexit\n"))
    doctor = koroku.run("doctor")
    _no_traceback(doctor)
    assert doctor.returncode == 1, doctor.stdout
    assert "koroku doctor --recover" in doctor.stderr


@pytest.mark.parametrize("damage", CASES, ids=[c.__name__ for c in CASES])
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_recover_leaves_a_healthy_data_dir_once(
    koroku: Koroku, fake_gemini: FakeGemini, damage: Callable[[Path], None]
) -> None:
    _damaged_home(koroku, damage)
    recover = koroku.run("doctor", "--recover")
    _no_traceback(recover)
    assert recover.returncode == 0, (recover.stdout, recover.stderr)
    assert "recovered" in recover.stdout
    if damage in (payload, turn_id):
        assert "damaged and set aside (1," in recover.stdout, recover.stdout
    assert len(_kept_aside(koroku.home)) == 1

    after = koroku.run("doctor")
    assert after.returncode == 0, (after.stdout, after.stderr)
    assert "integrity check: ok" in after.stdout
    assert ", 0 damaged" in after.stdout
    again = koroku.run("doctor", "--recover")
    assert again.returncode == 0, again.stderr
    assert len(_kept_aside(koroku.home)) == 1, "a healthy file is not recovered again"

    history = koroku.run("history", "--all")
    assert history.returncode == 0, history.stderr
    assert "zebra question 1" in history.stdout
    assert "cannot be read" not in history.stdout
    ask = koroku.run("ask", "still there?")
    assert ask.returncode == 0, ask.stderr
    assert ask.stdout.strip() == "ok"

"""Appends: one transaction, seq order, visible to other instances and other processes."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from koroku_desktop.domain.events import ClearedEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.parts import FunctionCallPart, TextPart
from koroku_desktop.store import SqliteEventLog, StoreClosedError
from tests.support.builders import user

REPO = Path(__file__).resolve().parents[2]


def test_append_returns_increasing_seqs_in_order(log: SqliteEventLog) -> None:
    first = log.append("c1", [user("one"), user("two")])
    second = log.append("c1", [user("three")])
    seqs = [s.seq for s in first + second]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3
    assert [s.event for s in first] == [user("one"), user("two")]
    assert log.count() == 3 and log.last_seq() == seqs[-1]
    assert [e.seq for e in log.entries("c1")] == seqs


def test_append_of_nothing_writes_nothing(log: SqliteEventLog) -> None:
    assert log.append("c1", []) == []
    assert log.count() == 0 and log.last_seq() == 0


def test_round_trip_keeps_every_field(log: SqliteEventLog) -> None:
    event = MessageEvent(
        role="model",
        origin="model",
        parts=[
            TextPart(text="thinking…", thought=True, thought_signature="c2lnLTE="),
            FunctionCallPart(name="bash", args={"command": "ls -la"}, id="call-1"),
        ],
    )
    (stored,) = log.append("c1", [event])
    again = log.get(stored.seq)
    assert isinstance(again, StoredEvent)
    assert again.event == event and again.conversation_id == "c1"
    assert log.get(stored.seq + 100) is None


def test_append_is_atomic(log: SqliteEventLog, db_path: Path) -> None:
    log.append("c1", [user("before")])
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute(
            "CREATE TRIGGER refuse_clear BEFORE INSERT ON events WHEN NEW.kind = 'cleared'"
            " BEGIN SELECT RAISE(ABORT, 'boom'); END"
        )
    conn.close()
    with pytest.raises(sqlite3.IntegrityError):
        log.append("c1", [user("lost words"), ClearedEvent()])
    assert log.count() == 1
    assert log.search("lost words") == []
    (after,) = log.append("c1", [user("after")])
    assert after.seq > 1
    assert [e.seq for e in log.entries("c1")] == [1, after.seq]


def test_second_instance_on_same_file_sees_appends(db_path: Path) -> None:
    with SqliteEventLog(db_path) as a, SqliteEventLog(db_path) as b:
        a.append("c1", [user("from a")])
        b.append("c1", [user("from b")])
        for log in (a, b):
            texts = [e.event.parts[0].text for e in log.load_live("c1").events]  # type: ignore[union-attr]
            assert texts == ["from a", "from b"]


def test_another_process_sees_appends_both_ways(log: SqliteEventLog, db_path: Path) -> None:
    log.append("c1", [user("parent says hi")])
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from koroku_desktop.domain.events import MessageEvent
        from koroku_desktop.domain.parts import TextPart
        from koroku_desktop.store import SqliteEventLog
        log = SqliteEventLog(Path(sys.argv[1]))
        print(len(log.load_live("c1").events))
        log.append("c1", [MessageEvent(role="model", parts=[TextPart(text="child replies")])])
        log.close()
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(db_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
    live = log.load_live("c1")
    assert [e.event.role for e in live.events] == ["user", "model"]  # type: ignore[union-attr]
    assert log.search("child replies")[0].role == "model"


def test_usable_from_worker_threads(log: SqliteEventLog) -> None:
    import asyncio

    async def main() -> int:
        await asyncio.gather(
            *(asyncio.to_thread(log.append, "c1", [user(f"m{i}")]) for i in range(20))
        )
        return len(await asyncio.to_thread(log.entries, "c1"))

    assert asyncio.run(main()) == 20
    assert log.count() == 20


def test_file_and_dir_are_private(log: SqliteEventLog, db_path: Path) -> None:
    log.append("c1", [user("secret")])
    assert stat.S_IMODE(os.stat(db_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(db_path.parent).st_mode) == 0o700
    for sidecar in ("-wal", "-shm"):
        side = db_path.with_name(db_path.name + sidecar)
        assert not side.exists() or stat.S_IMODE(os.stat(side).st_mode) == 0o600
    assert log.path == db_path


def test_integrity_check_is_ok(log: SqliteEventLog) -> None:
    log.append("c1", [user("x")] * 50)
    assert log.integrity_check() == "ok"


def test_pragmas(log: SqliteEventLog, db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    raw = log._db.conn()
    assert raw.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert raw.execute("PRAGMA busy_timeout").fetchone()[0] == 5000


def test_closed_log_refuses_work(db_path: Path) -> None:
    log = SqliteEventLog(db_path)
    log.close()
    with pytest.raises(StoreClosedError):
        log.append("c1", [user("late")])

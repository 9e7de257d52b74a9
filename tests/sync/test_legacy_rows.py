"""Rows without an event id (written by a Koroku from before ids, or a raw import) sync once:
their hub position is recorded by seq, and a pull that brings them back (a crash between the
hub's commit and the local record) places them instead of inserting a copy."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from koroku_desktop.app.config import Paths, Settings
from koroku_desktop.app.runtime import CONVERSATION_ID
from koroku_desktop.app.sync_wiring import SyncSetup, open_sync
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.sync.engine import to_hub
from tests.sync.conftest import Device
from tests.sync.test_sync_crash import hub_ids, write_turns


def insert_id_less(device: Device, texts: list[str]) -> None:
    """Rows as an old Koroku wrote them: no event id, turn id or writer."""
    with sqlite3.connect(device.home / "koroku.db") as conn:
        for text in texts:
            event = MessageEvent(role="user", origin="person", parts=[TextPart(text=text)])
            conn.execute(
                "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
                " VALUES (?, 'message', 1, ?, ?)",
                (CONVERSATION_ID, event.model_dump_json(exclude_none=True), time.time()),
            )


@contextmanager
def engine_of(device: Device) -> Iterator[SyncSetup]:
    """The device's sync engine, in this process."""
    log = SqliteEventLog(device.home / "koroku.db", writer="test@legacy")
    setup = open_sync(log, Paths(device.home), Settings(sync_url=device.hub_url))
    assert setup is not None
    try:
        yield setup
    finally:
        setup.close()
        log.close()


def count_rows(home: Path) -> int:
    with sqlite3.connect(home / "koroku.db") as conn:
        return int(conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])


def test_id_less_rows_are_pushed_once(devices: tuple[Device, Device]) -> None:
    a, b = devices
    write_turns(a, 1, "A")
    insert_id_less(a, ["old one", "old two"])
    write_turns(a, 1, "A2")
    with engine_of(a) as setup:
        first = setup.engine.sync_once()
        assert first.pushed == 6
        second = setup.engine.sync_once()
        assert (second.pushed, second.pulled) == (0, 0)
    assert count_rows(a.home) == 6
    assert a.sql("SELECT COUNT(*) FROM events WHERE hub_seq IS NULL") == [(0,)]
    assert len(hub_ids(a.hub_url)) == 6
    with engine_of(b) as setup:
        assert setup.engine.sync_once().pulled == 6
    texts = [str(r[0]) for r in b.sql("SELECT payload FROM events ORDER BY seq")]
    assert sum("old one" in t for t in texts) == 1


def test_id_less_rows_pulled_back_after_a_crash_are_placed_not_copied(
    devices: tuple[Device, Device],
) -> None:
    a, _b = devices
    write_turns(a, 1, "A")
    insert_id_less(a, ["old one"])
    with engine_of(a) as setup:
        ledger = setup.ledger
        turns, _held = ledger.pending_turns()
        events = ledger.events_of([s for t in turns for s in t.seqs])
        hub = setup.engine.hub
        setup.engine.check_hub()
        hub.push(0, [to_hub(e) for e in events])  # the hub committed; "crash" before the record
        report = setup.engine.sync_once()
        assert (report.pulled, report.pushed) == (0, 0)
    assert count_rows(a.home) == 3
    assert a.sql("SELECT COUNT(*) FROM events WHERE hub_seq IS NULL") == [(0,)]

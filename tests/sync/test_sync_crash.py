"""Crash-safety of sync: SIGKILL of `koroku sync` in the middle of a push and of a pull, then
sync again — no duplicates, nothing lost. Also: attachments and the password on disk."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psycopg

from koroku_desktop.app.runtime import CONVERSATION_ID
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from tests.e2e.conftest import wait_for
from tests.sync.conftest import Device
from tests.sync.pg_server import PASSWORD
from tests.sync.test_two_devices import live_ids


def write_turns(device: Device, count: int, label: str) -> list[str]:
    """`count` whole turns (question + answer) written straight into the device's log."""
    ids: list[str] = []
    with SqliteEventLog(device.home / "koroku.db", writer=f"test@{label}") as log:
        for n in range(count):
            turn = new_id()
            stored = log.append(
                CONVERSATION_ID,
                [
                    MessageEvent(
                        role="user", origin="person", parts=[TextPart(text=f"{label} q{n}")]
                    ),
                    MessageEvent(
                        role="model", origin="model", parts=[TextPart(text=f"{label} a{n}")]
                    ),
                ],
                turn_id=turn,
            )
            ids.extend(s.event_id for s in stored)
    return ids


def hub_ids(url: str) -> list[str]:
    with psycopg.connect(url, password=PASSWORD) as conn:
        rows = conn.execute("SELECT event_id FROM koroku.events ORDER BY hub_seq").fetchall()
    return [str(r[0]) for r in rows]


def kill_sync_at(device: Device, stage: str) -> None:
    """Run `koroku sync` that pauses at `stage` (test hook) after its first batch; SIGKILL it."""
    marker = device.workspace / f"paused-{stage}"
    victim = device.popen("sync", KOROKU_SYNC_TEST_PAUSE=f"{stage}:{marker}", KOROKU_SYNC_BATCH="2")
    try:
        wait_for(marker)
    finally:
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)


def test_sigkill_during_push_then_sync_again(devices: tuple[Device, Device], hub_url: str) -> None:
    a, b = devices
    written = write_turns(a, 5, "A")
    kill_sync_at(a, "push")
    # The hub committed the first turn; A died before noting it.
    assert hub_ids(hub_url) == written[:2]
    assert a.sql("SELECT COUNT(*) FROM events WHERE hub_seq IS NOT NULL") == [(0,)]
    a.sync()
    assert hub_ids(hub_url) == written
    assert a.sql("SELECT COUNT(*) FROM events WHERE hub_seq IS NULL") == [(0,)]
    assert a.sql("SELECT COUNT(*) FROM events") == [(10,)]
    b.sync()
    assert live_ids(b) == live_ids(a) == written


def test_sigkill_during_pull_then_sync_again(devices: tuple[Device, Device], hub_url: str) -> None:
    a, b = devices
    written = write_turns(a, 5, "A")
    mine = write_turns(b, 1, "B")
    a.sync()
    kill_sync_at(b, "pull")
    assert b.sql("SELECT COUNT(*) FROM events") == [(4,)]  # one page of 2 merged, + its own
    b.sync()
    a.sync()
    assert b.sql("SELECT COUNT(*), COUNT(DISTINCT event_id) FROM events") == [(12, 12)]
    assert hub_ids(hub_url) == written + mine
    assert live_ids(b) == live_ids(a) == written + mine


def test_attachments_reach_the_other_device_on_first_need(devices: tuple[Device, Device]) -> None:
    from koroku_desktop.app.config import Paths, Settings
    from koroku_desktop.app.sync_wiring import open_sync

    a, b = devices
    write_turns(a, 1, "A")
    picture = os.urandom(50_000)
    sha = BlobStore(a.home / "blobs").put(picture)
    assert "1 attachments" in a.sync()
    b.sync()
    settings = Settings(sync_url=b.hub_url)
    with SqliteEventLog(b.home / "koroku.db") as log:
        setup = open_sync(log, Paths(b.home), settings)
        assert setup is not None
        try:
            assert not setup.blobs.has(sha)
            assert setup.blobs.read(sha) == picture
            assert setup.blobs.has(sha)  # kept after the first fetch
        finally:
            setup.close()


def test_the_password_is_never_written_to_disk(
    devices: tuple[Device, Device], tmp_path: Path
) -> None:
    a, b = devices
    write_turns(a, 2, "A")
    a.sync()
    b.sync()
    status = b.run("sync", "--status")
    assert status.returncode == 0
    assert PASSWORD not in status.stdout and "127.0.0.1" in status.stdout
    secret = PASSWORD.encode()
    for device in (a, b):
        files = [p for p in device.home.rglob("*") if p.is_file()]
        assert files
        for path in files:
            assert secret not in path.read_bytes(), path

"""Continuous sync (LISTEN/NOTIFY wakes a follower; offline and back) and the turn lock
across devices (a PostgreSQL advisory lock composed with the local lease)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from koroku_desktop.app.config import Paths, Settings
from koroku_desktop.app.sync_wiring import SyncRuntime, wire_sync
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.sync.hub_lease import lock_key
from koroku_desktop.sync.service import SyncState
from tests.fakes.gemini_server import FakeGemini
from tests.sync.conftest import Device
from tests.sync.pg_server import PASSWORD, PgServer
from tests.sync.test_sync_crash import write_turns


def wait_until(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Poll `check` until true (generous timeout: arrival is asserted, not its speed)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


@contextmanager
def running_sync(device: Device) -> Iterator[tuple[SyncRuntime, SqliteEventLog]]:
    """The app's sync for `device`, in this process: its log, lock and service (not started)."""
    device.home.mkdir(parents=True, exist_ok=True)
    log = SqliteEventLog(device.home / "koroku.db", writer=f"app@{device.home.name}")
    local = SqliteTurnLock(log.path, "app")
    sync = wire_sync(log, Paths(device.home), Settings(sync_url=device.hub_url), local)
    assert sync is not None
    try:
        yield sync, log
    finally:
        sync.close()
        log.close()


def ids_in(log: SqliteEventLog) -> set[str]:
    return {e.event_id for e in log.entries(limit=100_000)}


def test_notify_wakes_a_follower_and_a_local_turn_is_pushed(
    devices: tuple[Device, Device],
) -> None:
    a, b = devices
    with running_sync(b) as (sync, log):
        statuses: list[SyncState] = []
        sync.service.on_status = lambda s: statuses.append(s.state)
        sync.service.start()
        wait_until(lambda: sync.service.status.state is SyncState.UP_TO_DATE, "first sync")
        written = write_turns(a, 1, "A")
        a.sync()  # the push NOTIFYs; nothing else would make B sync now
        wait_until(lambda: set(written) <= ids_in(log), "A's turn on B")
        mine = write_turns(b, 1, "B")  # a local turn (another process) is pushed too
        a_log = a.home / "koroku.db"
        wait_until(lambda: a.sync() is not None and set(mine) <= _ids_at(a_log), "B's turn on A")
        assert SyncState.SYNCING in statuses


def _ids_at(path: Path) -> set[str]:
    with SqliteEventLog(path, read_only=True) as log:
        return ids_in(log)


def test_offline_since_then_back_up_to_date(devices: tuple[Device, Device], hub: PgServer) -> None:
    _a, b = devices
    with running_sync(b) as (sync, _log):
        sync.service.start()
        wait_until(lambda: sync.service.status.state is SyncState.UP_TO_DATE, "first sync")
        hub.stop()
        sync.service.poke()
        wait_until(lambda: sync.service.status.state is SyncState.OFFLINE, "offline")
        assert sync.service.status.describe().startswith("Sync: offline since ")
        pending = write_turns(b, 1, "B")
        hub.start()
        wait_until(
            lambda: (
                sync.service.status.state is SyncState.UP_TO_DATE
                and b.sql("SELECT COUNT(*) FROM events WHERE hub_seq IS NULL") == [(0,)]
            ),
            "back online, pushed",
        )
        assert len(pending) == 2


def test_the_turn_lock_holds_across_devices_while_online(
    devices: tuple[Device, Device], hub: PgServer
) -> None:
    a, b = devices
    with running_sync(a) as (sync_a, _la), running_sync(b) as (sync_b, _lb):
        assert sync_a.lock.try_acquire("default", "turn-a") is None
        busy = sync_b.lock.try_acquire("default", "turn-b")
        # B reads who holds it from the hub: A's front end, host, pid and turn.
        assert busy is not None and busy.remote
        assert (busy.front_end, busy.host, busy.pid) == ("app", socket.gethostname(), os.getpid())
        assert busy.turn_id == "turn-a" and busy.owner == sync_a.lock.local.owner
        assert busy.where() == f"the chat window on {socket.gethostname()} (pid {os.getpid()})"
        # B's local lease was given back: another process on B is not blocked by B's try.
        assert sync_b.lock.local.try_acquire("default", "probe") is None
        sync_b.lock.local.release("default")
        assert sync_b.lock.try_acquire("other-conversation", "turn-c") is None
        sync_a.lock.release("default")
        assert sync_b.lock.try_acquire("default", "turn-b") is None
        sync_b.lock.release("default")
        hub.stop()
        # Offline: the local lease alone, no waiting on the hub.
        assert sync_b.lock.try_acquire("default", "turn-offline") is None
        sync_b.lock.release("default")


def test_a_holder_row_left_by_a_dead_session_is_not_believed(
    devices: tuple[Device, Device],
) -> None:
    a, b = devices
    with running_sync(a) as (sync_a, _la), running_sync(b) as (sync_b, _lb):
        assert sync_a.lock.try_acquire("default", "turn-a") is None
        with psycopg.connect(a.hub_url, password=PASSWORD, autocommit=True) as admin:
            (backend,) = admin.execute(
                "SELECT backend_pid FROM koroku.turn_holders WHERE conversation_id = 'default'"
            ).fetchone() or (0,)
            # A's session dies: its lock goes with it, its row stays behind.
            admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
            wait_until(lambda: _free(admin, backend), "A's session gone")
            # Someone that writes no row (an older Koroku) takes the lock meanwhile.
            admin.execute("SELECT pg_advisory_lock(%s)", (lock_key("default"),))
            busy = sync_b.lock.try_acquire("default", "turn-b")
            assert busy is not None
            assert busy.where() == "another device"  # not A's stale row, and no "(pid 0)"
            assert admin.execute("SELECT COUNT(*) FROM koroku.turn_holders").fetchone() == (1,)
            admin.execute("SELECT pg_advisory_unlock(%s)", (lock_key("default"),))
            assert sync_b.lock.try_acquire("default", "turn-b") is None
            sync_b.lock.release("default")
            # The release cleared B's row; A's stale one was replaced when B took the lock.
            assert admin.execute("SELECT COUNT(*) FROM koroku.turn_holders").fetchone() == (0,)


def _free(admin: psycopg.Connection[tuple[object, ...]], backend: object) -> bool:
    found = admin.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = %s", (backend,))
    return found.fetchone() == (0,)


def test_koroku_sync_refuses_a_remote_hub_without_tls(devices: tuple[Device, Device]) -> None:
    a, _b = devices
    done = a.run("sync", KOROKU_SYNC_URL="postgresql://me@hub.example.org/koroku")
    assert done.returncode == 2
    assert "without TLS" in done.stderr
    assert not (a.home / "koroku.db").exists() or a.sql("SELECT COUNT(*) FROM sync_state") == [(0,)]


def test_a_merge_before_unpushed_turns_is_seen_so_views_are_rebuilt(
    devices: tuple[Device, Device],
) -> None:
    a, b = devices
    written = write_turns(a, 1, "A")
    a.sync()
    mine = write_turns(b, 1, "B")  # B worked offline: its turn is not pushed yet
    with running_sync(b) as (sync, log):
        engine = sync.setup.engine
        before = log.load_live("default")
        view = ContextView.from_tail(before.boundary, before.events)
        seen = log.last_seq()
        assert engine.pull() == 2
        for entry in log.entries("default", after_seq=seen):  # what a follower reads next
            assert isinstance(entry, StoredEvent)
            view.apply(entry)
        assert view.reordered and view.stale  # placed before B's own: views are rebuilt
        assert [e.event_id for e in log.load_live("default").events] == written + mine
        report = engine.sync_once()  # pushes B's turn; nothing new to place before it
        assert report.pushed == 2 and report.pulled == 0


def test_koroku_ask_on_b_waits_while_a_holds_the_turn(
    devices: tuple[Device, Device], fake_gemini: FakeGemini
) -> None:
    a, b = devices
    with running_sync(a) as (sync_a, _log):
        assert sync_a.lock.try_acquire("default", "turn-on-a") is None
        fake_gemini.reply_text("after A's turn")
        asking = b.popen("ask", "hello from B")
        try:
            assert asking.stderr is not None
            line = asking.stderr.readline()
            holder = f"the chat window on {socket.gethostname()} (pid {os.getpid()})"
            assert f"waiting for the turn running in {holder}..." in line
            assert fake_gemini.generate_requests() == []
        finally:
            sync_a.lock.release("default")
        out, err = asking.communicate(timeout=60)
        assert asking.returncode == 0, err
        assert "after A's turn" in out


def test_koroku_sync_without_a_hub_says_how_to_set_one(devices: tuple[Device, Device]) -> None:
    a, _b = devices
    done = a.run("sync", KOROKU_SYNC_URL="")
    assert done.returncode == 2
    assert "no hub configured" in done.stdout and "KOROKU_SYNC_URL" in done.stdout


def test_koroku_sync_with_a_wrong_password_says_so_and_loses_nothing(
    devices: tuple[Device, Device],
) -> None:
    a, _b = devices
    a.home.mkdir(parents=True)
    written = write_turns(a, 1, "A")
    done = a.run("sync", PGPASSWORD="not-the-password")
    assert done.returncode == 1
    assert "the hub refused the login (password authentication failed" in done.stderr
    assert "koroku sync --set-password" in done.stderr and "not-the-password" not in done.stderr
    assert "pushed 2 events" in a.sync()  # the right password: nothing was lost
    assert set(written) <= _ids_at(a.home / "koroku.db")

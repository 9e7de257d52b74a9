"""A hub that stops answering never hangs a sync: through a fault-injecting proxy (cut,
stall, a lost answer to the COMMIT) and with the hub's backend stopped by SIGSTOP, `koroku
sync` gives up within its bound, says what it was waiting for in one line, exits 75, leaves
nothing half-pushed, and the next sync resumes. A device stalled mid-push does not hold the
push lock past the bound, and the app's sync shows "hub not answering since …"."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator

import psycopg
import pytest

from koroku_desktop.sync.hub_schema import PUSH_LOCK
from koroku_desktop.sync.service import SyncState
from tests.sync.conftest import Device
from tests.sync.fault_proxy import Arm, FaultProxy, fault_proxy
from tests.sync.pg_server import PASSWORD, PgServer, free_port
from tests.sync.test_follow_and_lock import running_sync, wait_until
from tests.sync.test_one_order import assert_one_order
from tests.sync.test_sync_crash import hub_ids, write_turns

BOUND = "3"
"""KOROKU_SYNC_TIMEOUT in these tests: seconds the hub may stay silent."""
INSERT = b"INSERT INTO koroku.events"


@pytest.fixture
def proxied(hub: PgServer) -> Iterator[FaultProxy]:
    """A proxy to the test hub, not armed yet (a test sets `arm`)."""
    with fault_proxy(hub.port) as proxy:
        yield proxy


def sync_through(device: Device, proxy: FaultProxy) -> subprocess.CompletedProcess[str]:
    """`koroku sync` via the proxy, bounded at BOUND s (the test's own timeout is far above)."""
    return device.run(
        "sync", timeout=120, KOROKU_SYNC_URL=proxy.url(device.hub_url), KOROKU_SYNC_TIMEOUT=BOUND
    )


def assert_one_clear_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 75, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("koroku sync: the hub ")
    assert "run `koroku sync` again" in lines[0]
    for word in words:
        assert word in lines[0], lines[0]


def unpushed(device: Device) -> int:
    return int(str(device.sql("SELECT COUNT(*) FROM events WHERE hub_seq IS NULL")[0][0]))


@pytest.mark.timeout(300)
def test_a_stalled_link_mid_push_ends_the_sync_and_the_next_one_resumes(
    devices: tuple[Device, Device], hub_url: str, proxied: FaultProxy
) -> None:
    a, b = devices
    written = write_turns(a, 3, "A")
    proxied.arm = Arm(INSERT, "stall")
    done = sync_through(a, proxied)
    assert proxied.hits.is_set()
    assert_one_clear_line(done, "did not answer for 3 s", "while pushing 6 events")
    assert hub_ids(hub_url) == []  # nothing half-pushed
    assert unpushed(a) == 6
    assert "pushed 6 events" in sync_through(a, proxied).stdout  # the fault fired once
    b.sync()
    assert_one_order(a, b, written)


@pytest.mark.timeout(300)
def test_a_cut_connection_mid_push_ends_in_one_line_and_the_next_sync_resumes(
    devices: tuple[Device, Device], hub_url: str, proxied: FaultProxy
) -> None:
    a, _b = devices
    written = write_turns(a, 2, "A")
    proxied.arm = Arm(INSERT, "cut")
    done = sync_through(a, proxied)
    assert_one_clear_line(done, "connection was lost", "while pushing 4 events")
    assert "Traceback" not in done.stderr and "libpq" not in done.stderr
    assert hub_ids(hub_url) == []
    assert sync_through(a, proxied).returncode == 0
    assert hub_ids(hub_url) == written
    assert unpushed(a) == 0


@pytest.mark.timeout(300)
def test_a_lost_answer_to_the_commit_is_found_on_the_hub_by_the_next_sync(
    devices: tuple[Device, Device], hub_url: str, proxied: FaultProxy
) -> None:
    a, b = devices
    written = write_turns(a, 2, "A")
    proxied.arm = Arm(b"COMMIT", "drop_answer", after=INSERT)
    done = sync_through(a, proxied)
    assert_one_clear_line(done, "did not answer for 3 s", "while committing 4 pushed events")
    assert hub_ids(hub_url) == written  # the hub committed; A never heard it
    assert unpushed(a) == 4
    again = sync_through(a, proxied)
    assert "pulled 0 events, pushed 0 events" in again.stdout  # found, not pushed twice
    assert unpushed(a) == 0
    assert a.sql("SELECT COUNT(*), COUNT(DISTINCT event_id) FROM events") == [(4, 4)]
    b.sync()
    assert_one_order(a, b, written)


def backend_waiting_for_the_push_lock(url: str) -> int | None:
    """The pid of a hub backend waiting for the push lock, if one is."""
    high, low = PUSH_LOCK >> 32, PUSH_LOCK & 0xFFFFFFFF
    with psycopg.connect(url, password=PASSWORD, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND classid = %s::bigint::oid AND objid = %s::bigint::oid",
            (high, low),
        ).fetchone()
    return int(str(row[0])) if row else None


@pytest.mark.timeout(300)
def test_a_hub_backend_stopped_by_sigstop_ends_the_sync_within_its_bound(
    devices: tuple[Device, Device], hub_url: str
) -> None:
    a, b = devices
    written = write_turns(a, 2, "A")
    stopped: list[int] = []
    with psycopg.connect(hub_url, password=PASSWORD) as holder:
        a.sync()  # the hub's tables exist; A's turns are on the hub
        more = write_turns(a, 1, "A2")
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (PUSH_LOCK,))
        victim = a.popen("sync", KOROKU_SYNC_TIMEOUT=BOUND)
        try:
            wait_until(
                lambda: backend_waiting_for_the_push_lock(hub_url) is not None,
                "A's sync waiting for the push lock",
            )
            pid = backend_waiting_for_the_push_lock(hub_url)
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)
            holder.rollback()  # the lock is free, but A's backend is frozen
            _out, err = victim.communicate(timeout=120)
        finally:
            for p in stopped:
                os.kill(p, signal.SIGCONT)
            if victim.poll() is None:
                victim.kill()
    assert victim.returncode == 75, err
    # The watchdog cut the frozen backend's connection (or, on a slow machine, the server
    # cancelled the lock wait just before the SIGSTOP): one line either way.
    assert ("did not answer for 3 s" in err or "statement timeout" in err) and err.count("\n") == 1
    assert hub_ids(hub_url) == written
    assert "pushed 2 events" in a.sync()
    b.sync()
    assert_one_order(a, b, written + more)


@pytest.mark.timeout(300)
def test_a_device_stalled_mid_push_does_not_block_another_past_the_bound(
    devices: tuple[Device, Device], hub_url: str, proxied: FaultProxy
) -> None:
    a, b = devices
    mine_a = write_turns(a, 2, "A")
    mine_b = write_turns(b, 2, "B")
    b.sync()  # the hub's tables exist
    proxied.arm = Arm(INSERT, "stall")  # A stalls holding the push lock
    stalled = a.popen("sync", KOROKU_SYNC_URL=proxied.url(a.hub_url), KOROKU_SYNC_TIMEOUT=BOUND)
    try:
        wait_until(proxied.hits.is_set, "A stalled inside its push")
        more_b = write_turns(b, 1, "B2")
        done = b.run("sync", timeout=120, KOROKU_SYNC_TIMEOUT=BOUND)
        _out, err = stalled.communicate(timeout=120)
    finally:
        if stalled.poll() is None:
            stalled.kill()
    assert done.returncode == 0, done.stderr  # the hub ended A's session; B got the lock
    assert "pushed 2 events" in done.stdout
    assert stalled.returncode == 75, err
    assert hub_ids(hub_url) == mine_b + more_b
    a.sync()
    b.sync()
    assert_one_order(a, b, mine_b + more_b + mine_a)


@pytest.mark.timeout(300)
def test_the_app_shows_hub_not_answering_since_and_recovers(
    devices: tuple[Device, Device], proxied: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    _a, b = devices
    monkeypatch.setenv("KOROKU_SYNC_TIMEOUT", BOUND)
    b.hub_url = proxied.url(b.hub_url)
    seen: list[str] = []
    with running_sync(b) as (sync, _log):
        sync.service.on_status = lambda s: seen.append(s.describe())
        sync.service.start()
        wait_until(lambda: sync.service.status.state is SyncState.UP_TO_DATE, "first sync")
        proxied.arm = Arm(INSERT, "stall")
        pending = write_turns(b, 1, "B")  # the local change makes it push, into the stall
        wait_until(
            lambda: b.sql("SELECT COUNT(*) FROM events WHERE hub_seq IS NULL") == [(0,)],
            "pushed after the stall, on a retry",
        )
        wait_until(lambda: sync.service.status.state is SyncState.UP_TO_DATE, "back up to date")
    assert len(pending) == 2
    not_answering = [s for s in seen if s.startswith("Sync: hub not answering since ")]
    assert not_answering, seen
    assert seen.index(not_answering[0]) < len(seen) - 1


def test_an_unreachable_hub_is_one_line_in_korokus_words_and_libpq_only_with_v(
    devices: tuple[Device, Device],
) -> None:
    a, _b = devices
    write_turns(a, 1, "A")
    nobody = a.hub_url.rsplit(":", 1)[0] + f":{free_port()}/hub"
    done = a.run("sync", KOROKU_SYNC_URL=nobody)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"koroku sync: cannot reach the hub koroku@127.0.0.1:{nobody.rsplit(':', 1)[1]}:"
        " nothing listens there (is the server running?)"
    ]
    verbose = a.run("-v", "sync", KOROKU_SYNC_URL=nobody)
    assert verbose.returncode == 1 and "Connection refused" in verbose.stderr
    assert unpushed(a) == 2

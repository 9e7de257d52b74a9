"""Sync through a real PostgreSQL hub on localhost: throughput, turn delay, initial sync.

Starts a throwaway PostgreSQL (initdb + pg_ctl, as the `postgres` user when run as root),
then on two data dirs (devices A and B):
  1. writes N events (2-event turns, default 100,000) on A and pushes them all: push
     throughput and the initial sync of an N-event log from the pushing side;
  2. B (empty) pulls them all: pull throughput, the initial sync of a new device;
  3. with the app's continuous sync running on both, a turn written on A 50 times: the
     delay until it is in B's log (LISTEN/NOTIFY), median and worst.
Run:

    uv run python benchmarks/bench_sync.py [N]

Prints figures. Not a test: timing belongs here, not in asserts.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from koroku_desktop.app.config import Paths, Settings
from koroku_desktop.app.sync_wiring import SyncRuntime, wire_sync
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.sync.service import SyncState
from tests.sync.pg_server import PASSWORD, PgServer, find_bin

LATENCY_RUNS = 50


def turn(n: int) -> list[MessageEvent]:
    return [
        MessageEvent(role="user", origin="person", parts=[TextPart(text=f"question {n} " * 8)]),
        MessageEvent(role="model", origin="model", parts=[TextPart(text=f"answer {n} " * 30)]),
    ]


def fill(log: SqliteEventLog, events: int) -> None:
    with log.batch():
        for n in range(events // 2):
            log.append("default", turn(n), turn_id=new_id())


def device(root: Path, name: str, url: str) -> tuple[SqliteEventLog, SyncRuntime]:
    home = root / name
    home.mkdir()
    log = SqliteEventLog(home / "koroku.db", writer=f"bench@{name}")
    sync = wire_sync(log, Paths(home), Settings(sync_url=url), SqliteTurnLock(log.path, "app"))
    assert sync is not None
    return log, sync


def wait(check: object, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError("never arrived")
        time.sleep(0.002)


def arrived(log: SqliteEventLog, event_id: str) -> bool:
    """Whether the event is in the log (one indexed read)."""
    return any(e.event_id == event_id for e in log.entries(after_seq=log.last_seq() - 4))


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    bindir = find_bin()
    if bindir is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql)")
    os.environ["PGPASSWORD"] = PASSWORD
    server = PgServer(bindir).init()
    server.start()
    try:
        url = server.new_database()
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            log_a, sync_a = device(root, "A", url)
            log_b, sync_b = device(root, "B", url)
            t0 = time.perf_counter()
            fill(log_a, events)
            print(f"wrote {events} events on A in {time.perf_counter() - t0:.1f} s")

            t0 = time.perf_counter()
            report = sync_a.setup.engine.sync_once()
            push_s = time.perf_counter() - t0
            print(
                f"push (initial sync of A): {report.pushed} events in {push_s:.1f} s"
                f" = {report.pushed / push_s:,.0f} events/s"
            )

            t0 = time.perf_counter()
            report = sync_b.setup.engine.sync_once()
            pull_s = time.perf_counter() - t0
            print(
                f"pull (initial sync of new device B): {report.pulled} events in"
                f" {pull_s:.1f} s = {report.pulled / pull_s:,.0f} events/s"
            )

            for sync in (sync_a, sync_b):
                sync.service.start()
            wait(lambda: sync_b.service.status.state is SyncState.UP_TO_DATE)
            wait(lambda: sync_a.service.status.state is SyncState.UP_TO_DATE)
            delays: list[float] = []
            for n in range(LATENCY_RUNS):
                t0 = time.perf_counter()
                stored = log_a.append("default", turn(events + n), turn_id=new_id())
                last = stored[-1].event_id
                wait(lambda last=last: arrived(log_b, last))
                delays.append(time.perf_counter() - t0)
            print(
                f"turn on A visible on B ({LATENCY_RUNS} turns):"
                f" median {statistics.median(delays) * 1000:.0f} ms,"
                f" worst {max(delays) * 1000:.0f} ms"
            )
            for sync in (sync_a, sync_b):
                sync.close()
            log_a.close()
            log_b.close()
    finally:
        server.destroy()


if __name__ == "__main__":
    main()

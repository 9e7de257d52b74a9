"""`koroku sync`: sync once with the hub, show what is pending, or store the hub password."""

from __future__ import annotations

import argparse
import getpass
import logging
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from koroku_desktop.agent.memory_events import sync_memory_files
from koroku_desktop.app.config import (
    KeyringUnavailable,
    SettingsError,
    default_paths,
    store_sync_password,
)
from koroku_desktop.app.runtime import CONVERSATION_ID
from koroku_desktop.app.settings_store import SettingsStore
from koroku_desktop.app.sync_wiring import (
    HubError,
    HubNotAnswering,
    SyncConfigError,
    describe_hub_error,
    open_sync,
)
from koroku_desktop.domain.ids import new_id
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.db_errors import DB_ERRORS, DatabaseUnavailable, open_event_log
from koroku_desktop.store.local_lease import SqliteTurnLock

log = logging.getLogger(__name__)

EXIT_NOT_ANSWERING = 75
"""`koroku sync`'s exit code when the hub stopped answering or the connection was cut
(EX_TEMPFAIL: nothing was half-pushed; run it again and it resumes)."""
BATCH_ENV = "KOROKU_SYNC_BATCH"
"""Events per push transaction / pull page (tests set it small to exercise resuming)."""


def register(sub: Any) -> None:
    """Add `koroku sync`."""
    sync = sub.add_parser("sync", help="sync the memory with your PostgreSQL hub once")
    sync.add_argument("--status", action="store_true", help="show pending events and the hub")
    sync.add_argument(
        "--set-password", action="store_true", help="store the hub password in the OS keyring"
    )
    sync.set_defaults(handler=cmd_sync)


def _when(value: str | None) -> str:
    if not value:
        return "never"
    return datetime.fromtimestamp(float(value)).strftime("%Y-%m-%d %H:%M:%S")


def _write_memory_files(event_log: SqliteEventLog, db: Path, home: Path) -> None:
    """Bring the memory files up to the log, under the conversation's turn lease (as every
    front end does, so a file edited by hand is taken in once); when a turn runs elsewhere,
    that front end writes them after it."""
    lock = SqliteTurnLock(db, "sync")
    try:
        if lock.try_acquire(CONVERSATION_ID, new_id()) is not None:
            return
        try:
            sync_memory_files(event_log, CONVERSATION_ID, home)
        finally:
            lock.release(CONVERSATION_ID)
    except DB_ERRORS as exc:
        print(f"koroku sync: memory files not brought up to date: {exc}", file=sys.stderr)
    finally:
        lock.close()


def cmd_sync(args: argparse.Namespace) -> int:
    """Run one sync (or `--status`, `--set-password`); exit 1 when the hub fails or refuses,
    75 when it stopped answering or the connection was cut (run again to resume)."""
    if args.set_password:
        try:
            store_sync_password(getpass.getpass("Hub password (input hidden): "))
        except (KeyringUnavailable, EOFError) as exc:
            print(f"koroku sync: {exc}", file=sys.stderr)
            return 2
        print("Hub password stored in your OS keyring (service 'koroku').")
        return 0
    if not getattr(args, "verbose", False):  # libpq's and psycopg's own words: with -v only
        logging.getLogger("psycopg").setLevel(logging.ERROR)
    paths = default_paths().ensure()
    try:
        settings = SettingsStore.open(paths).effective
        event_log = open_event_log(paths.db)
    except (SettingsError, DatabaseUnavailable) as exc:
        print(f"koroku sync: {exc}", file=sys.stderr)
        return 2
    try:
        batch = int(os.environ[BATCH_ENV]) if os.environ.get(BATCH_ENV) else None
        setup = open_sync(event_log, paths, settings, batch=batch)
    except (SyncConfigError, ValueError) as exc:
        print(f"koroku sync: {exc}", file=sys.stderr)
        event_log.close()
        return 2
    if setup is None:
        print("koroku sync: no hub configured: set sync_url in settings or KOROKU_SYNC_URL")
        event_log.close()
        return 2
    try:
        if args.status:
            events, turns = setup.ledger.pending_counts()
            print(f"hub: {setup.address.display()}")
            print(f"pending: {events} events in {turns} turns")
            print(f"pulled up to hub position: {setup.ledger.pulled_position()}")
            print(f"last success: {_when(setup.ledger.state('last_success'))}")
            return 0
        report = setup.engine.sync_once()
        print(f"synced with {setup.address.display()}: {report.summary()}")
        if report.pulled:  # memory edits may have come: the files follow the log
            _write_memory_files(event_log, paths.db, paths.home)
        return 0
    except HubNotAnswering as exc:
        log.info("hub call failed: %s", exc.__cause__ or exc)  # libpq's words, with -v
        print(
            f"koroku sync: {exc}: nothing was half-pushed; run `koroku sync` again to resume",
            file=sys.stderr,
        )
        return EXIT_NOT_ANSWERING
    except HubError as exc:
        log.info("hub call failed: %s", exc)  # libpq's words, with -v
        print(f"koroku sync: {describe_hub_error(exc, setup.address.display())}", file=sys.stderr)
        return 1
    except RuntimeError as exc:  # HubMismatchError, HubMovedError
        print(f"koroku sync: {exc}", file=sys.stderr)
        return 1
    finally:
        setup.close()
        event_log.close()

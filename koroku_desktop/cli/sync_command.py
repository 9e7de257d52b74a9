"""`koroku sync`: sync once with the hub, show what is pending, or store the hub password."""

from __future__ import annotations

import argparse
import getpass
import logging
import os
import sys
from datetime import datetime
from typing import Any

from koroku_desktop.app.config import (
    KeyringUnavailable,
    SettingsError,
    default_paths,
    store_sync_password,
)
from koroku_desktop.app.runtime import DatabaseUnavailable
from koroku_desktop.app.sync_once import open_sync_once
from koroku_desktop.app.sync_wiring import (
    HubError,
    HubNotAnswering,
    SyncConfigError,
    describe_hub_error,
)
from koroku_desktop.cli.refusal import refused
from koroku_desktop.domain.errors import SyncError

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


def cmd_sync(args: argparse.Namespace) -> int:
    """Run one sync (or `--status`, `--set-password`); exit 1 when the hub fails or refuses,
    75 when it stopped answering or the connection was cut (run again to resume)."""
    if args.set_password:
        try:
            store_sync_password(getpass.getpass("Hub password (input hidden): "))
        except (KeyringUnavailable, EOFError) as exc:
            return refused("sync", exc)
        print("Hub password stored in your OS keyring (service 'koroku').")
        return 0
    if not getattr(args, "verbose", False):  # libpq's and psycopg's own words: with -v only
        logging.getLogger("psycopg").setLevel(logging.ERROR)
    paths = default_paths().ensure()
    batch = int(os.environ[BATCH_ENV]) if os.environ.get(BATCH_ENV) else None
    try:
        sync = open_sync_once(paths, batch=batch)
    except (SettingsError, DatabaseUnavailable, SyncConfigError, ValueError) as exc:
        return refused("sync", exc)
    if sync is None:
        print("koroku sync: no hub configured: set sync_url in settings or KOROKU_SYNC_URL")
        return 2
    setup = sync.setup
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
            problem = sync.write_memory_files()
            if problem is not None:
                print(
                    f"koroku sync: memory files not brought up to date: {problem}", file=sys.stderr
                )
        return 0  # noqa: TRY300 — the finally closes the sync on every path
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
    except SyncError as exc:  # HubMismatchError, HubMovedError
        return refused("sync", exc, 1)
    finally:
        sync.close()
    return 0

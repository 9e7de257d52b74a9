"""The composition of `koroku sync`: this data dir's log and its sync engine, wired once.

The terminal command only talks and prints; what it syncs with is built here, so the
front end imports no adapter (store, sync) itself.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from koroku_desktop.agent.memory_events import sync_memory_files
from koroku_desktop.app.config import Paths
from koroku_desktop.app.runtime import CONVERSATION_ID
from koroku_desktop.app.settings_store import SettingsStore
from koroku_desktop.app.sync_wiring import SyncSetup, open_sync
from koroku_desktop.domain.ids import new_id
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.db_errors import open_event_log
from koroku_desktop.store.local_lease import SqliteTurnLock


@dataclass
class SyncOnce:
    """One data dir's log and sync engine, for one `koroku sync` run."""

    paths: Paths
    log: SqliteEventLog
    setup: SyncSetup

    def write_memory_files(self) -> str | None:
        """Bring the memory files up to the log under the conversation's turn lease (as every
        front end does, so a file edited by hand is taken in once); when a turn runs
        elsewhere, that front end writes them after it. Why it could not, or None."""
        lock = SqliteTurnLock(self.paths.db, "sync")
        try:
            if lock.try_acquire(CONVERSATION_ID, new_id()) is not None:
                return None
            try:
                sync_memory_files(self.log, CONVERSATION_ID, self.paths.home)
            finally:
                lock.release(CONVERSATION_ID)
        except (OSError, sqlite3.Error) as exc:
            return str(exc)
        finally:
            lock.close()
        return None

    def close(self) -> None:
        """Close the hub connection, the ledger and the log."""
        self.setup.close()
        self.log.close()


def open_sync_once(paths: Paths, *, batch: int | None = None) -> SyncOnce | None:
    """The log and sync engine of `paths` (None: no hub configured, nothing left open).

    Raises `SettingsError` (bad settings), `DatabaseUnavailable`, and `SyncConfigError` or
    `ValueError` for a hub URL that cannot be used.
    """
    settings = SettingsStore.open(paths).effective
    event_log = open_event_log(paths.db)
    try:
        setup = open_sync(event_log, paths, settings, batch=batch)
    except BaseException:
        event_log.close()
        raise
    if setup is None:
        event_log.close()
        return None
    return SyncOnce(paths, event_log, setup)

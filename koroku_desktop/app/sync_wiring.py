"""Wiring of sync (used by runtime and `koroku sync`): the hub address from settings and
keyring, the local ledger, the engine, the hub as a blob source, and `SyncSwitch`, which
follows the settings while the app runs (a new hub URL, sync turned on or off).

Nothing here connects anywhere unless a hub URL is configured (settings `sync_url` or
`KOROKU_SYNC_URL`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from koroku_desktop.app.config import Paths, Settings, resolve_sync_password
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.store.sync_ledger import SqliteSyncLedger
from koroku_desktop.sync.config import HubAddress, SyncConfigError, check_url
from koroku_desktop.sync.engine import SyncEngine, device_id
from koroku_desktop.sync.errors import HubNotAnswering
from koroku_desktop.sync.hub import HubError, PostgresHub, describe_hub_error, login_refused
from koroku_desktop.sync.hub_lease import HubTurnLock
from koroku_desktop.sync.service import SyncService, SyncState, SyncStatus

log = logging.getLogger(__name__)

__all__ = [
    "HubError",
    "HubNotAnswering",
    "SyncConfigError",
    "SyncRuntime",
    "SyncSetup",
    "SyncState",
    "SyncStatus",
    "SyncSwitch",
    "describe_hub_error",
    "hub_address",
    "login_refused",
    "open_sync",
    "wire_sync",
]


def hub_address(settings: Settings) -> HubAddress | None:
    """The checked hub address (None: sync is off). Raises `SyncConfigError` for a bad URL.
    The password is looked up (keyring, then PGPASSWORD) at each connect."""
    if not settings.sync_url.strip():
        return None
    return check_url(settings.sync_url, resolve_sync_password)


class HubBlobSource:
    """The hub as a `BlobSource`: an attachment this device lacks is fetched on first need.

    Its own connection (blob reads come from any thread); an unreachable hub is "not there".
    """

    def __init__(self, address: HubAddress, device: str) -> None:
        self.hub = PostgresHub(address, device)

    def fetch_blob(self, sha256: str) -> bytes | None:
        """The blob from the hub, or None when the hub lacks it or cannot be reached."""
        try:
            return self.hub.fetch_blob(sha256)
        except HubError as exc:
            log.info("could not fetch blob %s from the hub: %s", sha256[:12], exc)
            self.hub.close()
            return None


@dataclass
class SyncSetup:
    """Sync for one data dir: the engine and what it was built from."""

    address: HubAddress
    ledger: SqliteSyncLedger
    engine: SyncEngine
    blobs: BlobStore

    def close(self) -> None:
        """Close the hub connection and the ledger's."""
        self.engine.hub.close()
        self.ledger.close()


def open_sync(
    log_: SqliteEventLog,
    paths: Paths,
    settings: Settings,
    *,
    batch: int | None = None,
    blobs: BlobStore | None = None,
) -> SyncSetup | None:
    """The sync engine of this data dir, or None when no hub is configured. `blobs` (the
    runtime's blob store) gets the hub as its source; by default a new store is made."""
    address = hub_address(settings)
    if address is None:
        return None
    ledger = SqliteSyncLedger(log_)
    device = device_id(ledger)
    if blobs is None:
        blobs = BlobStore(paths.blobs)
    blobs.source = HubBlobSource(address, device)
    engine = SyncEngine(ledger, PostgresHub(address, device), blobs)
    if batch is not None:
        engine.batch = batch
    return SyncSetup(address, ledger, engine, blobs)


@dataclass
class SyncRuntime:
    """Sync as the app and the front ends use it: the composed turn lock and the service."""

    setup: SyncSetup
    lock: HubTurnLock
    service: SyncService

    def close(self) -> None:
        """Stop the service, free the hub lock, close the connections."""
        self.service.stop()
        self.lock.close()
        self.setup.close()


def wire_sync(
    log_: SqliteEventLog, paths: Paths, settings: Settings, local_lock: SqliteTurnLock
) -> SyncRuntime | None:
    """Sync for a runtime: None when no hub is configured or its URL is refused (logged; the
    app works exactly as without sync). The service is not started here (the app starts it)."""
    try:
        setup = open_sync(log_, paths, settings)
    except SyncConfigError as exc:
        log.warning("sync is off: %s", exc)
        return None
    if setup is None:
        return None
    service = SyncService(setup.engine, log_.data_version)
    lock = HubTurnLock(local_lock, setup.address, online=service.online_or_unknown)
    return SyncRuntime(setup, lock, service)


class SyncSwitch:
    """Sync as the settings say, switched while the app runs.

    A changed hub URL (or sync turned on or off) retires the running service (stopped in the
    background, so the UI thread never waits on a hub) and starts one against the new hub
    with the same status listeners. The agent keeps one turn lock (`lock`), retargeted, and
    the runtime one blob store (`blobs`), whose source follows the hub.
    """

    def __init__(
        self, log_: SqliteEventLog, paths: Paths, settings: Settings, local_lock: SqliteTurnLock
    ) -> None:
        self.log, self.paths = log_, paths
        self.blobs = BlobStore(paths.blobs)
        self.lock = HubTurnLock(local_lock, None)
        self.current: SyncRuntime | None = None
        self.url = ""
        self.on_status: Callable[[SyncStatus], None] | None = None
        self._told: SyncStatus | None = None
        self._mutex = threading.Lock()
        self.apply(settings)

    def apply(self, settings: Settings) -> bool:
        """Follow the settings' hub URL; True when it changed (the service was switched)."""
        url = settings.sync_url.strip()
        with self._mutex:
            if url == self.url:
                return False
            self.url = url
            old, self.current = self.current, None
            if old is not None:
                retire(old)
            self.blobs.source = None
            self.lock.retarget(None, lambda: True)
            try:
                setup = open_sync(self.log, self.paths, settings, blobs=self.blobs)
            except SyncConfigError as exc:
                log.warning("sync is off: %s", exc)
                self._tell(SyncStatus(SyncState.ERROR, detail=str(exc)))
                return True
            if setup is None:
                self._tell(SyncStatus(SyncState.OFF))
                return True
            service = SyncService(setup.engine, self.log.data_version)
            self.lock.retarget(setup.address, service.online_or_unknown)
            self.current = SyncRuntime(setup, self.lock, service)
            if self.on_status is not None:
                self._start(service)
            return True

    def start(self, on_status: Callable[[SyncStatus], None]) -> None:
        """Sync continuously from now on (the app calls it once its window is up), telling
        `on_status`, also after a switch."""
        with self._mutex:
            self.on_status = on_status
            if self.current is not None:
                self._start(self.current.service)
            elif self._told is not None:  # e.g. the URL in settings was refused at start
                on_status(self._told)

    def _start(self, service: SyncService) -> None:
        def tell(status: SyncStatus) -> None:
            current = self.current
            if current is not None and current.service is service:  # not a retired one's
                self._tell(status)

        service.on_status = tell
        service.start()

    def _tell(self, status: SyncStatus) -> None:
        self._told = status
        if self.on_status is not None:
            self.on_status(status)

    def retry_now(self) -> None:
        """Try the hub again at once (a new password was stored: it is read at each connect)."""
        current = self.current
        if current is not None:
            current.service.poke()

    def url_problem(self, url: str) -> str | None:
        """Why this hub URL would be refused (for the settings page), None when it is fine."""
        return sync_url_problem(url)

    def describe(self) -> str:
        """The state in one line: the service's, or why there is none ('Sync: off' without
        a hub, the error for a refused URL)."""
        current = self.current
        if current is not None:
            return current.service.describe()
        return self._told.describe() if self._told is not None else "Sync: off"

    def close(self) -> None:
        """Stop the service, free the hub lock, close the connections."""
        with self._mutex:
            if self.current is not None:
                self.current.close()
                self.current = None
            self.lock.close()


def retire(old: SyncRuntime) -> None:
    """Stop a replaced service in a background thread, deaf to its last status changes (its
    turn lock, shared with the new one, stays open)."""
    old.service.on_status = lambda _s: None

    def stop() -> None:
        old.service.stop()
        old.setup.close()

    threading.Thread(target=stop, name="koroku-sync-retire", daemon=True).start()


def sync_url_problem(url: str) -> str | None:
    """Why this hub URL would be refused (for the settings page), None when it is fine."""
    if not url.strip():
        return None
    try:
        check_url(url)
    except SyncConfigError as exc:
        return str(exc)
    return None

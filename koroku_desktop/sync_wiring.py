"""Wiring of sync (used by runtime and `koroku sync`): the hub address from settings and
keyring, the local ledger, the engine, the hub as a blob source.

Nothing here connects anywhere unless a hub URL is configured (settings `sync_url` or
`KOROKU_SYNC_URL`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from koroku_desktop.config import Paths, Settings, resolve_sync_password
from koroku_desktop.store.blobs import BlobStore
from koroku_desktop.store.event_log import SqliteEventLog
from koroku_desktop.store.sync_ledger import SqliteSyncLedger
from koroku_desktop.store.turn_lock import SqliteTurnLock
from koroku_desktop.sync.config import HubAddress, SyncConfigError, check_url
from koroku_desktop.sync.engine import SyncEngine, device_id
from koroku_desktop.sync.hub import HubError, PostgresHub
from koroku_desktop.sync.service import SyncService, SyncState, SyncStatus
from koroku_desktop.sync.turn_lock import HubTurnLock

log = logging.getLogger(__name__)

__all__ = [
    "HubError",
    "SyncConfigError",
    "SyncRuntime",
    "SyncSetup",
    "SyncState",
    "SyncStatus",
    "hub_address",
    "open_sync",
    "wire_sync",
]


def hub_address(settings: Settings) -> HubAddress | None:
    """The checked hub address (None: sync is off). Raises `SyncConfigError` for a bad URL."""
    if not settings.sync_url.strip():
        return None
    return check_url(settings.sync_url, resolve_sync_password())


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
    log_: SqliteEventLog, paths: Paths, settings: Settings, *, batch: int | None = None
) -> SyncSetup | None:
    """The sync engine of this data dir, or None when no hub is configured."""
    address = hub_address(settings)
    if address is None:
        return None
    ledger = SqliteSyncLedger(log_)
    device = device_id(ledger)
    blobs = BlobStore(paths.blobs, HubBlobSource(address, device))
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


def sync_url_problem(url: str) -> str | None:
    """Why this hub URL would be refused (for the settings page), None when it is fine."""
    if not url.strip():
        return None
    try:
        check_url(url)
    except SyncConfigError as exc:
        return str(exc)
    return None

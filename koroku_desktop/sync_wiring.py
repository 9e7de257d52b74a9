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
from koroku_desktop.sync.config import HubAddress, SyncConfigError, check_url
from koroku_desktop.sync.engine import SyncEngine, device_id
from koroku_desktop.sync.hub import HubError, PostgresHub

log = logging.getLogger(__name__)

__all__ = ["HubError", "SyncConfigError", "SyncSetup", "hub_address", "open_sync"]


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
    blobs = BlobStore(paths.home / "blobs", HubBlobSource(address, device))
    engine = SyncEngine(ledger, PostgresHub(address, device), blobs)
    if batch is not None:
        engine.batch = batch
    return SyncSetup(address, ledger, engine, blobs)

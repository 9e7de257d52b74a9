"""What the sync engine needs of this device: its log's bookkeeping and its blob folder."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from koroku_desktop.domain.events import StoredEvent


class PendingTurnLike(Protocol):
    """A whole turn written here and not pushed yet."""

    @property
    def turn_id(self) -> str: ...

    @property
    def seqs(self) -> list[int]: ...


class LocalLedger(Protocol):
    """The local log's sync bookkeeping (filled by store/sync_ledger.py in runtime)."""

    def state(self, name: str) -> str | None:
        """A saved value (hub id, device id, last success), None when unset."""
        ...

    def set_state(self, name: str, value: str) -> None:
        """Save a value."""
        ...

    def pulled_position(self) -> int:
        """The hub position this device has every event up to."""
        ...

    def pending_turns(self) -> tuple[Sequence[PendingTurnLike], int]:
        """Whole turns ready to push in written order, and how many still run."""
        ...

    def events_of(self, seqs: Sequence[int]) -> list[StoredEvent]:
        """The parseable events at these local seqs."""
        ...

    def restate_old_compactions(self) -> int:
        """Restate by id a head standing on a compaction that covers by seq (before a push)."""
        ...

    def record_pushed(self, positions: Sequence[tuple[str, int]]) -> None:
        """Note the hub positions of pushed events."""
        ...

    def merge_pulled(self, events: Sequence[StoredEvent], hub_seqs: Sequence[int]) -> int:
        """Insert pulled events at their hub positions (idempotent); how many were new."""
        ...


class LocalBlobs(Protocol):
    """The content-addressed blob folder (blobs/blob_store.py's BlobStore)."""

    def shas(self) -> Iterable[str]:
        """Every blob held here."""
        ...

    def read(self, sha256: str) -> bytes:
        """A blob's bytes."""
        ...

"""Results of reading the log: the live load and full-text search hits."""

from __future__ import annotations

from dataclasses import dataclass

from koroku_desktop.domain.events import DamagedEvent, StoredEvent


@dataclass(frozen=True)
class LiveLoad:
    """What the store returns for the live context: the boundary and what follows it."""

    boundary: StoredEvent | None
    events: list[StoredEvent]
    damaged: list[DamagedEvent]
    unloaded: tuple[int, int] | None = None
    """A live range too long to load at once: (first live seq, first loaded seq). The events
    in between are in the log but not in `events` (a compaction reads them from the log)."""


@dataclass(frozen=True)
class SearchHit:
    """One full-text match in the log."""

    seq: int
    conversation_id: str
    created_at: float
    kind: str
    role: str | None
    snippet: str
    """Text around the match with the matched words wrapped in [[ and ]]."""

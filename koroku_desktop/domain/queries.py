"""Reading the log: a page request, the live load and full-text search hits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from koroku_desktop.domain.events import DamagedEvent, StoredEvent


@dataclass(frozen=True)
class EntryQuery:
    """A page of the whole log asked for: the arguments of `LogReader.entries` as one value."""

    conversation_id: str | None
    before_seq: int | None
    after_seq: int | None
    limit: int
    newest_first: bool
    kinds: Sequence[str] | None

    @property
    def empty(self) -> bool:
        """Nothing can match: no room (`limit <= 0`) or an empty kind filter."""
        return self.limit <= 0 or (self.kinds is not None and not self.kinds)


@dataclass(frozen=True)
class LiveLoad:
    """What the store returns for the live context: the boundary and what follows it."""

    boundary: StoredEvent | None
    events: list[StoredEvent]
    damaged: list[DamagedEvent]
    unloaded: tuple[int, int] | None = None
    """A live part too long to load at once: (first live seq, seq of the first message
    loaded). The live messages before that one in entries order (not seq order: a sync can
    place pulled turns before unpushed ones) are in the log but not in `events`; a
    compaction reads them from the log (agent/older_messages.py `read_messages`)."""


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

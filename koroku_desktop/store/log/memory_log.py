"""InMemoryEventLog and MemoryTurnLock: the `EventLog` and `TurnLock` ports without a file.

The second implementation of each port (the SQLite file is the first, a PostgreSQL sync hub
will be the third). The contract suite in tests/store runs against all of them, so agent
tests may use these and still mean the real thing. Several "processes" are several
`MemoryTurnLock`s on one `LeaseBoard`, or several agents on one log.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time
from collections.abc import Callable, Sequence

from koroku_desktop.domain.coverage import live_part, whole_turns_together
from koroku_desktop.domain.events import (
    CompactionEvent,
    Event,
    LogEntry,
    StoredEvent,
)
from koroku_desktop.domain.ids import new_id, observe, writer_name
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.domain.queries import EntryQuery, LiveLoad, SearchHit
from koroku_desktop.store.log.live_load import whole_turns
from koroku_desktop.store.log.paging import PagedLog
from koroku_desktop.store.search.searchable import searchable_text

_WORD = re.compile(r"\w+", re.UNICODE)


class InMemoryEventLog(PagedLog):
    """An `EventLog` in a list: same ids, seqs, boundaries, paging and search rules."""

    def __init__(self, *, writer: str | None = None) -> None:
        self.writer = writer or writer_name("memory")
        self._rows: list[StoredEvent] = []
        self._ids: set[str] = set()
        self._newest = ""
        self._version = 0
        self._lock = threading.Lock()

    def append(
        self, conversation_id: str, events: Sequence[Event], *, turn_id: str | None = None
    ) -> list[StoredEvent]:
        """See `EventLog.append`."""
        if not events:
            return []
        now = time.time()
        if self._newest:
            observe(self._newest)
        ids = [new_id() for _ in events]
        turn = turn_id or ids[0]
        return self.merge(
            [
                StoredEvent(0, conversation_id, now, event, event_id, turn, self.writer)
                for event, event_id in zip(events, ids, strict=True)
            ]
        )

    def merge(self, incoming: Sequence[StoredEvent]) -> list[StoredEvent]:
        """Insert events written elsewhere, skipping ids already known (idempotent); whole
        turns together, like `SqliteEventLog.merge` without hub positions (this log has no
        hub: its order is its seq order)."""
        stored: list[StoredEvent] = []
        with self._lock:
            for item in whole_turns_together(incoming):
                if item.event_id in self._ids:
                    continue
                seq = (self._rows[-1].seq if self._rows else 0) + 1
                row = dataclasses.replace(item, seq=seq, hub_seq=None)
                self._rows.append(row)
                self._ids.add(item.event_id)
                self._newest = max(self._newest, item.event_id)
                stored.append(row)
            if stored:
                self._version += 1
        return stored

    def data_version(self) -> int:
        """See `EventLog.data_version`."""
        with self._lock:
            return self._version

    def last_seq(self) -> int:
        """The highest seq written so far (0 for an empty log)."""
        with self._lock:
            return self._rows[-1].seq if self._rows else 0

    def count(self) -> int:
        """Number of events in the log."""
        with self._lock:
            return len(self._rows)

    def get(self, seq: int) -> LogEntry | None:
        """The entry at `seq`, or None."""
        with self._lock:
            return next((r for r in self._rows if r.seq == seq), None)

    def load_live(self, conversation_id: str, tail_limit: int | None = None) -> LiveLoad:
        """See `EventLog.load_live` (the same coverage, order and tail-limit rules)."""
        with self._lock:
            rows = [r for r in self._rows if r.conversation_id == conversation_id]
        live = live_part(rows)
        messages = live.messages
        unloaded: tuple[int, int] | None = None
        limit = max(1, tail_limit) if tail_limit is not None else None
        if limit is not None and len(messages) > limit:
            # As the SQLite log does: the newest in order, a turn cut by the limit left out.
            newest = messages[-(limit + 1) :]
            keep = {id(m) for m in whole_turns(newest, limit)}
            first = min(m.seq for m in messages)
            messages = [m for m in messages if id(m) in keep]
            unloaded = (first, messages[0].seq) if messages else None
        events = [*live.rejected, *messages]
        return LiveLoad(boundary=live.boundary, events=events, damaged=[], unloaded=unloaded)

    def summarised_in(self, event_ids: Sequence[str]) -> dict[str, int]:
        """See `LogReader.summarised_in`."""
        wanted = set(event_ids)
        found: dict[str, int] = {}
        with self._lock:
            compactions = [r for r in self._rows if isinstance(r.event, CompactionEvent)]
        for row in compactions:
            assert isinstance(row.event, CompactionEvent)
            for covered in row.event.covered_ids or ():
                if covered in wanted and covered not in found:
                    found[covered] = row.seq
        return found

    def summary_span(self, compaction_id: str) -> tuple[int, int, int] | None:
        """See `LogReader.summary_span`."""
        with self._lock:
            rows = list(self._rows)
        head = next((r for r in rows if r.event_id == compaction_id), None)
        if head is None or not isinstance(head.event, CompactionEvent):
            return None
        covered = set(head.event.covered_ids or ())
        seqs = [r.seq for r in rows if r.event_id in covered]
        return (len(seqs), min(seqs), max(seqs)) if seqs else None

    def _page(self, query: EntryQuery) -> list[LogEntry]:
        """See `LogReader.entries`."""
        conversation_id, before, after = query.conversation_id, query.before_seq, query.after_seq
        with self._lock:
            rows = [
                r
                for r in self._rows
                if (conversation_id is None or r.conversation_id == conversation_id)
                and (before is None or r.seq < before)
                and (after is None or r.seq > after)
                and (query.kinds is None or r.event.kind in query.kinds)
            ]
        if query.newest_first:
            rows.reverse()
        return list(rows[: query.limit])

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Every event whose text holds all the query's words (case-folded), newest first."""
        words = [w.casefold() for w in _WORD.findall(query)]
        if not words or limit <= 0:
            return []
        hits: list[SearchHit] = []
        with self._lock:
            rows = list(reversed(self._rows))
        for row in rows:
            text = searchable_text(row.event)
            found = {w.casefold() for w in _WORD.findall(text)}
            if not all(w in found for w in words):
                continue
            role = getattr(row.event, "role", None)
            snippet = re.sub(
                rf"\b({re.escape(words[0])})\b", r"[[\1]]", text, count=1, flags=re.IGNORECASE
            )
            kind = row.event.kind
            hit = SearchHit(row.seq, row.conversation_id, row.created_at, kind, role, snippet)
            hits.append(hit)
            if len(hits) >= limit:
                break
        return hits


class LeaseBoard:
    """The shared lease table of several `MemoryTurnLock`s (one per simulated process)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.leases: dict[str, LockHolder] = {}
        self.lock = threading.Lock()


class MemoryTurnLock:
    """A `TurnLock` over a `LeaseBoard`: same lease and expiry rules, no heartbeat thread.

    Expiry is checked against the board's clock; `renew` plays the heartbeat in tests.
    """

    def __init__(self, board: LeaseBoard, front_end: str, *, ttl: float = 10.0) -> None:
        self.board = board
        self.front_end = front_end
        self.owner = new_id()
        self.ttl = ttl

    def holder(self, conversation_id: str) -> LockHolder | None:
        """The live holder other than this instance, or None."""
        with self.board.lock:
            return self._live(conversation_id)

    def _live(self, conversation_id: str) -> LockHolder | None:
        held = self.board.leases.get(conversation_id)
        if held is None or held.owner == self.owner or held.expires_at <= self.board.clock():
            return None
        return held

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None:
        """See `TurnLock.try_acquire`."""
        with self.board.lock:
            busy = self._live(conversation_id)
            if busy is None:
                self.board.leases[conversation_id] = LockHolder(
                    self.owner,
                    self.front_end,
                    "memory",
                    os.getpid(),
                    turn_id,
                    self.board.clock() + self.ttl,
                )
            return busy

    def renew(self, conversation_id: str) -> bool:
        """Push the expiry out (what the SQLite lock's heartbeat thread does)."""
        with self.board.lock:
            held = self.board.leases.get(conversation_id)
            if held is None or held.owner != self.owner:
                return False
            self.board.leases[conversation_id] = dataclasses.replace(
                held, expires_at=self.board.clock() + self.ttl
            )
            return True

    def release(self, conversation_id: str) -> None:
        """See `TurnLock.release`."""
        with self.board.lock:
            held = self.board.leases.get(conversation_id)
            if held is not None and held.owner == self.owner:
                del self.board.leases[conversation_id]

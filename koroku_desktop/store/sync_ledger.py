"""SqliteSyncLedger: the local side of sync — what is pushed, what was pulled, which hub.

The bookkeeping lives in the log's own file (m007): `events.hub_seq` is each event's place in
the hub's order (NULL: not pushed yet) and `sync_state` names the hub and the last success.
The last pulled hub position is simply the highest `hub_seq` here: a device pushes only when
it has pulled everything before, so that number is exact, and it is crash-safe by
construction (merging and recording a position are one transaction).

Rows without an event id (written by a Koroku from before ids, or a raw import) are read with
an id derived from the row (`legacy_id`, store/log/rows.py) that no column holds, so their hub
position is recorded by seq, and a pull that brings one back is matched by that derived id
instead of being inserted again.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from koroku_desktop.domain.coverage import restated_by_id
from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.store.data_dir import data_dir_for, release
from koroku_desktop.store.local_lease import pid_alive
from koroku_desktop.store.log.event_log import SqliteEventLog
from koroku_desktop.store.log.rows import COLUMNS, parse_row

_SET_HUB_SEQ_BY_SEQ = (
    "UPDATE events SET hub_seq = ? WHERE seq = ? AND event_id IS NULL AND hub_seq IS NULL"
)
"""An id-less row's hub position (the bookkeeping column only, set once from NULL)."""


@dataclass(frozen=True)
class PendingTurn:
    """A turn written here and not pushed yet: its conversation, id and local seqs."""

    conversation_id: str
    turn_id: str
    seqs: list[int]


class SqliteSyncLedger:
    """The sync bookkeeping of one local log (see the module docstring)."""

    def __init__(self, log: SqliteEventLog) -> None:
        self.log = log
        self._dir = data_dir_for(log.path)
        self._db = self._dir.database
        self._lock = threading.Lock()

    def close(self) -> None:
        """Let go of the data dir's database (the log stays open)."""
        with self._lock:
            release(self._dir)

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            return list(self._db.conn().execute(sql, tuple(params)).fetchall())

    # -- state -----------------------------------------------------------------------------

    def state(self, name: str) -> str | None:
        """A value of `sync_state` (e.g. `hub_id`, `last_success`), None when unset."""
        rows = self._read("SELECT value FROM sync_state WHERE name = ?", (name,))
        return str(rows[0][0]) if rows else None

    def set_state(self, name: str, value: str) -> None:
        """Set a value of `sync_state`."""
        with self._lock, self._db.atomic("IMMEDIATE"):
            self._db.conn().execute(
                "INSERT INTO sync_state (name, value) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (name, value),
            )

    def pulled_position(self) -> int:
        """The hub position this device has everything up to (0: nothing yet)."""
        return int(str(self._read("SELECT COALESCE(MAX(hub_seq), 0) FROM events")[0][0]))

    # -- push ------------------------------------------------------------------------------

    def _held_turns(self) -> set[str]:
        """Turns still running under a live lease: never pushed half-finished."""
        held: set[str] = set()
        rows = self._read("SELECT turn_id, host, pid, expires_at FROM turn_leases")
        host = socket.gethostname()
        for turn_id, lease_host, pid, expires_at in rows:
            if float(str(expires_at)) <= time.time():
                continue
            if lease_host == host and not pid_alive(int(str(pid))):
                continue
            held.add(str(turn_id))
        return held

    def pending_turns(self) -> tuple[list[PendingTurn], int]:
        """Whole turns not pushed yet, in the order they were written, and how many are
        held back because their turn still runs (a conversation's later turns wait too)."""
        rows = self._read(
            "SELECT seq, conversation_id, turn_id FROM events WHERE hub_seq IS NULL ORDER BY seq"
        )
        turns: dict[str, PendingTurn] = {}
        for seq, conversation_id, turn_id in rows:
            key = str(turn_id or f"seq-{seq}")
            turn = turns.setdefault(key, PendingTurn(str(conversation_id), key, []))
            turn.seqs.append(int(str(seq)))
        held = self._held_turns()
        blocked: set[str] = set()
        ready: list[PendingTurn] = []
        for turn in turns.values():
            if turn.turn_id in held or turn.conversation_id in blocked:
                blocked.add(turn.conversation_id)
                continue
            ready.append(turn)
        return ready, len(turns) - len(ready)

    def events_of(self, seqs: Sequence[int]) -> list[StoredEvent]:
        """The parseable events at these seqs, in seq order (damaged rows stay local)."""
        found: list[StoredEvent] = []
        for start in range(0, len(seqs), 500):
            chunk = list(seqs[start : start + 500])
            marks = ", ".join("?" for _ in chunk)
            for row in self._read(
                f"SELECT {COLUMNS} FROM events WHERE seq IN ({marks}) ORDER BY seq", chunk
            ):
                entry = parse_row(row)
                if isinstance(entry, StoredEvent):
                    found.append(entry)
        return found

    def restate_old_compactions(self) -> int:
        """Before pushing an old compaction (written before compactions covered by id): in
        each conversation whose head stands on one, append the head restated by id
        (domain/coverage.py `restated_by_id`), so other devices read the same coverage.
        Returns how many were appended."""
        conversations = self._read(
            "SELECT DISTINCT conversation_id FROM events WHERE kind = 'compaction'"
            " AND hub_seq IS NULL AND typeof(payload) = 'text' AND json_valid(payload)"
            " AND json_type(payload, '$.covered_ids') IS NOT 'array'"
        )
        appended = 0
        for (conversation_id,) in conversations:
            events = [
                e
                for e in self.log.entries(str(conversation_id), limit=10_000_000)
                if isinstance(e, StoredEvent)
            ]
            restated = restated_by_id(events)
            if restated is not None:
                self.log.append(str(conversation_id), [restated])
                appended += 1
        return appended

    def record_pushed(self, positions: Sequence[tuple[str, int]]) -> None:
        """Note the hub positions the hub gave the events this device pushed."""
        rest = self._place_id_less(positions)
        self.log.record_hub_order(rest)

    def _id_less(self) -> dict[str, int]:
        """The derived id -> seq of every row without a stored event id (usually none)."""
        rows = self._read(f"SELECT {COLUMNS} FROM events WHERE event_id IS NULL")
        return {e.event_id: e.seq for row in rows if isinstance(e := parse_row(row), StoredEvent)}

    def _place_id_less(self, positions: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
        """Record the positions of id-less rows by seq (one transaction); return the others."""
        id_less = self._id_less()
        if not id_less:
            return list(positions)
        by_seq = [(hub, id_less[event_id]) for event_id, hub in positions if event_id in id_less]
        with self._lock, self._db.atomic("IMMEDIATE"):
            self._db.conn().executemany(_SET_HUB_SEQ_BY_SEQ, by_seq)
        return [(event_id, hub) for event_id, hub in positions if event_id not in id_less]

    # -- pull ------------------------------------------------------------------------------

    def merge_pulled(self, events: Sequence[StoredEvent], hub_seqs: Sequence[int]) -> int:
        """Insert pulled events with their hub positions (idempotent); return how many were new.

        An event that is an id-less row of this log (pushed from here) only gets its position.
        """
        rest = self._place_id_less([(e.event_id, h) for e, h in zip(events, hub_seqs, strict=True)])
        if len(rest) < len(events):
            keep = {event_id for event_id, _ in rest}
            pairs = [(e, h) for e, h in zip(events, hub_seqs, strict=True) if e.event_id in keep]
            events, hub_seqs = [e for e, _ in pairs], [h for _, h in pairs]
        return len(self.log.merge(events, hub_seqs))

    def pending_counts(self) -> tuple[int, int]:
        """(events, turns) written here and not pushed yet."""
        events, turns = self._read(
            "SELECT COUNT(*), COUNT(DISTINCT turn_id) FROM events WHERE hub_seq IS NULL"
        )[0]
        return int(str(events)), int(str(turns))

"""Loading the live context from the SQLite log by the rules of domain/coverage.py.

First a light pass over the conversation's rows (ids, turns and kinds, no payloads) decides,
with `live_part`, which messages are live; only the compactions, `rejected` events and the
live messages (the newest `tail_limit` of them) are then read and parsed. The light pass
reads the rows in this log's entries order; the coverage and turn rules never depend on it
across turns, so copies of the log with rows in another order load the same context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from koroku_desktop.domain.coverage import live_part, turn_keys
from koroku_desktop.domain.events import (
    EVENT_KINDS,
    ClearedEvent,
    DamagedEvent,
    LogEntry,
    MessageEvent,
    StoredEvent,
)
from koroku_desktop.domain.queries import LiveLoad
from koroku_desktop.store.rows import COLUMNS, Row

_LIGHT = "seq, conversation_id, created_at, kind, event_id, turn_id, writer"
_PLACEHOLDER = MessageEvent(role="user", parts=[])
"""Stands for a message while only its identity is known (the light pass)."""
_BATCH = 500
_HEAVY = ("compaction", "rejected")


def _light(row: Row, event: MessageEvent | ClearedEvent) -> StoredEvent:
    seq, conversation_id, created_at, _kind, event_id, turn_id, writer = row
    try:
        when = float(created_at)
    except (TypeError, ValueError):
        when = 0.0
    return StoredEvent(
        int(seq),
        str(conversation_id),
        when,
        event,
        str(event_id or ""),
        str(turn_id or ""),
        str(writer or ""),
    )


def load_live(
    rows: Callable[[str, Sequence[object]], list[Row]],
    parse: Callable[[Row], LogEntry],
    conversation_id: str,
    tail_limit: int | None,
) -> LiveLoad:
    """The head boundary, the `rejected` events and the live messages (see the module).

    `rows(sql, params)` runs a query and `parse` turns a row into an entry (the log's own).
    """
    light = rows(
        f"SELECT {_LIGHT} FROM events WHERE conversation_id = ? ORDER BY seq", (conversation_id,)
    )
    # Compactions and set-asides are needed whole; a row of a kind no one knows is read to be
    # reported as damaged.
    heavy_seqs = [int(r[0]) for r in light if r[3] in _HEAVY or r[3] not in EVENT_KINDS]
    damaged: list[DamagedEvent] = []
    heavy = {e.seq: e for e in _read(rows, parse, heavy_seqs, damaged)}
    events: list[StoredEvent] = []
    for row in light:
        seq, kind = int(row[0]), row[3]
        if seq in heavy:
            events.append(heavy[seq])
        elif kind == "message":
            events.append(_light(row, _PLACEHOLDER))
        elif kind == "cleared":
            events.append(_light(row, ClearedEvent()))
    keys = turn_keys(events)
    live = live_part(events, keys)
    wanted = live.messages
    unloaded: tuple[int, int] | None = None
    if tail_limit is not None and len(wanted) > max(1, tail_limit):
        cut = len(wanted) - max(1, tail_limit)
        unloaded = (min(m.seq for m in wanted[:cut]), wanted[cut].seq)
        wanted = wanted[cut:]
    parsed = {e.seq: e for e in _read(rows, parse, [m.seq for m in wanted], damaged)}
    messages = [parsed[m.seq] for m in wanted if m.seq in parsed]
    boundary = live.boundary
    if boundary is not None and boundary.seq in heavy:
        boundary = heavy[boundary.seq]
    damaged.sort(key=lambda d: d.seq)
    return LiveLoad(
        boundary=boundary, events=[*live.rejected, *messages], damaged=damaged, unloaded=unloaded
    )


def _read(
    rows: Callable[[str, Sequence[object]], list[Row]],
    parse: Callable[[Row], LogEntry],
    seqs: list[int],
    damaged: list[DamagedEvent],
) -> list[StoredEvent]:
    """The parsed events at `seqs` (damaged ones go to `damaged`), a batch of seqs a query."""
    found: list[StoredEvent] = []
    for start in range(0, len(seqs), _BATCH):
        batch = seqs[start : start + _BATCH]
        marks = ", ".join("?" for _ in batch)
        for row in rows(f"SELECT {COLUMNS} FROM events WHERE seq IN ({marks})", batch):
            entry = parse(row)
            if isinstance(entry, StoredEvent):
                found.append(entry)
            else:
                damaged.append(entry)
    return found

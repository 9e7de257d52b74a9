"""Loading the live context from the SQLite log by the rules of domain/coverage.py.

The cost follows what is live, not the history: the compactions and clears are found through
the `(conversation_id, kind, seq)` index, the head's chain is read by event id, and the
messages are selected in SQL (after the last clear, not among the ids the chain covers, the
newest first by event id when `tail_limit` applies). Only those rows are parsed, then
`live_part` puts them in turn order. Nothing here reads the rows' order across turns, so
copies of the log with rows in another order load the same context.

A compaction and a clear are turns of their own (each is appended alone under the turn
lease), so their own id is their turn's place in turn order. With `tail_limit`, a turn cut
by the limit is left out whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from koroku_desktop.domain.coverage import chain_of, live_part
from koroku_desktop.domain.events import (
    EVENT_KINDS,
    CompactionEvent,
    DamagedEvent,
    LogEntry,
    StoredEvent,
)
from koroku_desktop.domain.queries import LiveLoad
from koroku_desktop.store.rows import COLUMNS, Row

Rows = Callable[[str, Sequence[object]], list[Row]]
Parse = Callable[[Row], LogEntry]
_BATCH = 500
_PAGE = 5000
_MESSAGE_KINDS = ("message", "rejected")


def load_live(rows: Rows, parse: Parse, conversation_id: str, tail_limit: int | None) -> LiveLoad:
    """The head boundary, the `rejected` and `superseded` events and the live messages (see
    the module).

    `rows(sql, params)` runs a query and `parse` turns a row into an entry (the log's own).
    """
    damaged: list[DamagedEvent] = []
    clear, chain = _head_and_chain(rows, parse, conversation_id, damaged)
    after = clear.event_id if clear is not None else ""
    covered = [
        i for c in chain if isinstance(c.event, CompactionEvent) for i in c.event.covered_ids or ()
    ]
    where = "conversation_id = ? AND kind = 'message'"
    params: list[object] = [conversation_id]
    if after:  # rows with no id (a broken import) count only while nothing was cleared
        where += " AND event_id > ?"
        params.append(after)
    set_aside = _read(
        rows, parse, where.replace("'message'", "'rejected'"), params, damaged, by_seq=True
    )
    replaced = _read(  # regenerated or edited turns (agent/supersede.py): left out whole
        rows, parse, where.replace("'message'", "'superseded'"), params, damaged, by_seq=True
    )
    legacy = next(
        (c for c in chain if isinstance(c.event, CompactionEvent) and c.event.covered_ids is None),
        None,
    )
    if legacy is not None and isinstance(legacy.event, CompactionEvent):
        # An old compaction covered what came before its `kept_from_seq` in its own log.
        where += " AND seq >= ?"
        params.append(legacy.event.kept_from_seq)
    skip: frozenset[str] = frozenset()
    if covered:
        # Walk the seqs up to the first message the chain does not cover (it stops there),
        # so the rest reads only from that seq on.
        skip = frozenset(covered)
        first = _first_uncovered(rows, where, params, skip)
        where += " AND seq >= ?"
        params.append(first)
    elif tail_limit is not None:
        # Only the newest by event id: walk that index down, not the whole conversation.
        where = where.replace("conversation_id = ? AND kind", "+conversation_id = ? AND +kind")
    unloaded: tuple[int, int] | None = None
    if tail_limit is None:
        candidates = _read(rows, parse, where, params, damaged, skip=skip)
    else:
        limit = max(1, tail_limit)
        candidates = _read(rows, parse, where, params, damaged, newest=limit + 1, skip=skip)
        if len(candidates) > limit:
            candidates = whole_turns(candidates, limit)
            first_live = rows(f"SELECT MIN(seq) FROM events WHERE {where}", params)[0][0]
            loaded = min((c.seq for c in candidates), default=None)
            if first_live is not None and loaded is not None and int(first_live) < loaded:
                unloaded = (int(first_live), loaded)
    damaged.extend(_unknown_kinds(rows, parse, conversation_id))
    clears = [clear] if clear is not None else []
    live = live_part([*clears, *chain, *set_aside, *candidates])
    damaged.sort(key=lambda d: d.seq)
    return LiveLoad(
        boundary=live.boundary,
        events=[*live.rejected, *replaced, *live.messages],
        damaged=damaged,
        unloaded=unloaded,
    )


def _head_and_chain(
    rows: Rows, parse: Parse, conversation_id: str, damaged: list[DamagedEvent]
) -> tuple[StoredEvent | None, list[StoredEvent]]:
    """The last clear, and the head compaction after it with the compactions its `base_id`s
    lead back to (domain/coverage.py `chain_of`). Only those rows are parsed: the others are
    known by their id alone, so a long history of compactions costs one light query. A
    damaged row is reported and the next one by id taken instead."""
    light = [
        (int(seq), str(event_id or ""), str(kind))
        for seq, event_id, kind in rows(
            "SELECT seq, event_id, kind FROM events"
            " WHERE conversation_id = ? AND kind IN ('cleared', 'compaction')",
            [conversation_id],
        )
    ]

    known: dict[int, StoredEvent] = {}
    if any(not event_id for _, event_id, _ in light):
        # Rows whose id column is empty (written before ids, by a raw import): their id is
        # derived when parsed (`legacy_id`), so these are parsed, all at once.
        for entry in _read(
            rows,
            parse,
            "conversation_id = ? AND kind IN ('cleared', 'compaction')"
            " AND (+event_id IS NULL OR +event_id = '')",
            [conversation_id],
            damaged,
            by_seq=True,
        ):
            known[entry.seq] = entry
        light = [(q, known[q].event_id if q in known else e, k) for q, e, k in light]

    def parsed(seq: int) -> StoredEvent | None:
        if seq in known:
            return known[seq]
        found = _read(rows, parse, "seq = ?", [seq], damaged, by_seq=True)
        return found[0] if found else None

    def newest(kind: str, after: str) -> StoredEvent | None:
        for seq, _, _ in sorted(
            (r for r in light if r[2] == kind and r[1] > after), key=lambda r: r[1], reverse=True
        ):
            if (entry := parsed(seq)) is not None:
                return entry
        return None

    clear = newest("cleared", "")
    after = clear.event_id if clear is not None else ""
    head = newest("compaction", after)
    seq_of = {event_id: seq for seq, event_id, kind in light if kind == "compaction"}
    return clear, chain_of(head, lambda base: parsed(seq_of[base]) if base in seq_of else None)


def _read(
    rows: Rows,
    parse: Parse,
    where: str,
    params: Sequence[object],
    damaged: list[DamagedEvent],
    newest: int | None = None,
    skip: frozenset[str] = frozenset(),
    by_seq: bool = False,
) -> list[StoredEvent]:
    """The parsed events matching `where` but for the ids in `skip` (damaged ones go to
    `damaged`); with `newest`, only that many, the newest first by event id. Seqs are
    selected first, rows then read a batch at a time."""
    order = " ORDER BY seq" if by_seq else " ORDER BY event_id DESC"
    if newest is not None and not skip:
        order += f" LIMIT {int(newest)}"
    light = rows(f"SELECT seq, event_id FROM events WHERE {where}{order}", params)
    seqs = [int(seq) for seq, event_id in light if event_id not in skip]
    if newest is not None:
        seqs = seqs[:newest]
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


def whole_turns(newest: list[StoredEvent], limit: int) -> list[StoredEvent]:
    """Of the newest `limit + 1` events (by id), those of the turns the limit did not cut;
    when one turn is longer than the limit, its newest `limit` events."""
    by_id = sorted(newest, key=lambda c: c.event_id)
    cut = by_id[0].turn_id or by_id[0].event_id
    whole = [c for c in newest if (c.turn_id or c.event_id) != cut]
    return whole if whole else by_id[1:]


def _first_uncovered(rows: Rows, where: str, params: list[object], covered: frozenset[str]) -> int:
    """The seq of the first row matching `where` whose id is not in `covered` (a page at a
    time, stopping there; past the end when every one is covered)."""
    after = 0
    while True:
        page = rows(  # one range of the kind index, in seq order: no sort
            f"SELECT seq, event_id FROM events WHERE {where} AND seq > ? ORDER BY seq LIMIT ?",
            [*params, after, _PAGE],
        )
        for seq, event_id in page:
            if event_id not in covered:
                return int(seq)
        if len(page) < _PAGE:
            return after + 1 if not page else int(page[-1][0]) + 1
        after = int(page[-1][0])


def _unknown_kinds(rows: Rows, parse: Parse, conversation_id: str) -> list[DamagedEvent]:
    """Rows of a kind no one knows: damaged, reported (never fatal). The conversation's kinds
    are found by skipping along the kind index, so only such rows are read."""
    found: list[DamagedEvent] = []
    kind: str | None = ""
    while True:
        (kind,) = rows(
            "SELECT MIN(kind) FROM events WHERE conversation_id = ? AND kind > ?",
            [conversation_id, kind],
        )[0]
        if kind is None:
            return found
        if kind not in EVENT_KINDS:
            for row in rows(
                f"SELECT {COLUMNS} FROM events WHERE conversation_id = ? AND kind = ?",
                [conversation_id, kind],
            ):
                entry = parse(row)
                if isinstance(entry, DamagedEvent):
                    found.append(entry)

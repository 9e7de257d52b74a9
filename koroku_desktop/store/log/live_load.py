"""Loading the live context from the SQLite log by the rules of domain/coverage.py.

The cost follows what is live, not the history:

- the last clear, and the head compaction after it, are the last rows of their kind in
  entries order (the `(conversation_id, kind, ORDER_KEY)` index), parsed alone;
- the head's chain is walked in `compaction_links` only as far as needed, and the messages
  are read from the head's first live seq on (store/log/coverage_index.py), each with the
  compactions covering it, so a covered one is dropped before it is parsed;
- with no compaction, `tail_limit` reads only the newest messages in entries order.

The result is in entries order (`StoredEvent.order_key`): the chat, the viewer and the model
see one order, the same on every device syncing with one hub. With `tail_limit`, a turn cut
by the limit is left out whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from koroku_desktop.domain.coverage import in_entries_order, not_set_aside, turn_of
from koroku_desktop.domain.events import (
    EVENT_KINDS,
    CompactionEvent,
    DamagedEvent,
    LogEntry,
    StoredEvent,
)
from koroku_desktop.domain.queries import LiveLoad
from koroku_desktop.store.log.coverage_index import Chain, covering, first_live_seq
from koroku_desktop.store.log.order import ORDER_KEY
from koroku_desktop.store.log.rows import COLUMNS, Row

Rows = Callable[[str, Sequence[object]], list[Row]]
Parse = Callable[[Row], LogEntry]
_HEADS = 16


def load_live(rows: Rows, parse: Parse, conversation_id: str, tail_limit: int | None) -> LiveLoad:
    """The head boundary, the `rejected` and `superseded` events and the live messages (see
    the module).

    `rows(sql, params)` runs a query and `parse` turns a row into an entry (the log's own).
    """
    damaged: list[DamagedEvent] = []
    clear = _last(rows, parse, conversation_id, "cleared", None, damaged)
    after = clear.order_key if clear is not None else None
    head = _last(rows, parse, conversation_id, "compaction", after, damaged)
    where = "conversation_id = ? AND kind = 'message'"
    params: list[object] = [conversation_id]
    if after is not None:
        where += f" AND {ORDER_KEY} > ?"
        params.append(after)
    set_aside = _read(rows, parse, where.replace("'message'", "'rejected'"), params, damaged)
    replaced = _read(  # regenerated or edited turns (agent/supersede.py): left out whole
        rows, parse, where.replace("'message'", "'superseded'"), params, damaged
    )
    chain = _chain(rows, head)
    if isinstance(chain, int):  # an old compaction: it covered the seqs below this
        where += " AND seq >= ?"
        params.append(chain)
        candidates = _read(rows, parse, where, params, damaged)
    elif chain is not None:  # only what the chain leaves live, from its first live seq on
        where += " AND seq >= ?"
        params.append(first_live_seq(rows, conversation_id, chain))
        candidates = _read(rows, parse, where, params, damaged, chain=chain)
    elif tail_limit is not None:  # the newest in entries order, down that index
        candidates = _read(rows, parse, where, params, damaged, newest=max(1, tail_limit) + 1)
    else:
        candidates = _read(rows, parse, where, params, damaged)
    messages = not_set_aside(in_entries_order(candidates), set_aside)
    unloaded: tuple[int, int] | None = None
    if tail_limit is not None and len(messages) > max(1, tail_limit):
        limit = max(1, tail_limit)
        messages = whole_turns(messages[-(limit + 1) :], limit)
        first_live = rows(f"SELECT MIN(seq) FROM events WHERE {where}", params)[0][0]
        if first_live is not None and messages:  # what comes before messages[0] in order
            unloaded = (int(first_live), messages[0].seq)
    damaged.extend(_unknown_kinds(rows, parse, conversation_id))
    damaged.sort(key=lambda d: d.seq)
    return LiveLoad(
        boundary=head if head is not None else clear,
        events=[*set_aside, *replaced, *messages],
        damaged=damaged,
        unloaded=unloaded,
    )


def _chain(rows: Rows, head: StoredEvent | None) -> Chain | int | None:
    """The head's chain of compactions (None without a head); for an old compaction as the
    head, only its `kept_from_seq` (it covered every message below)."""
    if head is None or not isinstance(head.event, CompactionEvent):
        return None
    if head.event.covered_ids is None:
        return head.event.kept_from_seq
    return Chain(rows, head.event_id)


def _last(
    rows: Rows,
    parse: Parse,
    conversation_id: str,
    kind: str,
    after: int | None,
    damaged: list[DamagedEvent],
) -> StoredEvent | None:
    """The last event of `kind` in entries order (after the order key `after`); a damaged
    row is reported and the one before it taken instead."""
    below: int | None = None
    while True:
        where = "conversation_id = ? AND kind = ?"
        params: list[object] = [conversation_id, kind]
        if after is not None:
            where += f" AND {ORDER_KEY} > ?"
            params.append(after)
        if below is not None:
            where += f" AND {ORDER_KEY} < ?"
            params.append(below)
        page = rows(
            f"SELECT {COLUMNS}, {ORDER_KEY} FROM events WHERE {where}"
            f" ORDER BY {ORDER_KEY} DESC LIMIT {_HEADS}",
            params,
        )
        for row in page:
            entry = parse(row[:-1])
            if isinstance(entry, StoredEvent):
                return entry
            damaged.append(entry)
        if len(page) < _HEADS:
            return None
        below = int(page[-1][-1])


def _read(
    rows: Rows,
    parse: Parse,
    where: str,
    params: Sequence[object],
    damaged: list[DamagedEvent],
    newest: int | None = None,
    chain: Chain | None = None,
) -> list[StoredEvent]:
    """The parsed events matching `where` (damaged ones go to `damaged`); with `chain`, not
    those it covers (dropped unparsed); with `newest`, only that many, the last in entries
    order."""
    if newest is not None:
        order = f" ORDER BY {ORDER_KEY} DESC LIMIT {int(newest)}"
    else:
        order = " ORDER BY seq"  # one index range; put in entries order by the caller
    found: list[StoredEvent] = []
    cover = covering("event_id") if chain is not None else "NULL"
    for row in rows(f"SELECT {COLUMNS}, {cover} FROM events WHERE {where}{order}", params):
        if chain is not None and chain.covers(row[-1]):
            continue
        entry = parse(row[:-1])
        if not isinstance(entry, StoredEvent):
            damaged.append(entry)
        elif chain is None or row[6] or not _covered_by_derived_id(rows, entry, chain):
            found.append(entry)
    return found


def _covered_by_derived_id(rows: Rows, entry: StoredEvent, chain: Chain) -> bool:
    """For a row whose id column is empty (a raw import): whether the chain covers it by the
    id derived for it when parsed (`legacy_id`)."""
    (compactions,) = rows(f"SELECT {covering('?')}", [entry.event_id])[0]
    return chain.covers(compactions)


def whole_turns(newest: list[StoredEvent], limit: int) -> list[StoredEvent]:
    """Of the newest `limit + 1` events (in entries order), those of the turns the limit did
    not cut; when one turn is longer than the limit, its newest `limit` events."""
    ordered = in_entries_order(newest)
    cut = turn_of(ordered[0])
    whole = [c for c in ordered if turn_of(c) != cut]
    return whole if whole else ordered[1:]


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

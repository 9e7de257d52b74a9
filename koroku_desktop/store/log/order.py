"""The order entries are read in: synced events by hub order, then unsynced ones by seq.

Every device syncing with one hub sees the same events in the same order (the hub's), and
its own events not pushed yet after them in the order they were written. Without sync every
`hub_seq` is NULL and the order is plain `seq` order. The key is one SQL expression, indexed
by m007, so ordered reads and keyset paging stay index ranges.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence

from koroku_desktop.domain.events import UNSYNCED_BASE, LogEntry, StoredEvent
from koroku_desktop.domain.queries import EntryQuery
from koroku_desktop.store.log.rows import COLUMNS, Row

ORDER_KEY = f"COALESCE(hub_seq, {UNSYNCED_BASE} + seq)"
"""The SQL expression of an `events` row's place in entries' order (indexed by m007); the
same number as `StoredEvent.order_key`."""

KEY_OF_SEQ = f"COALESCE((SELECT {ORDER_KEY} FROM events WHERE seq = ?), {UNSYNCED_BASE} + ?)"
"""The order key of the row at a seq (two parameters: the seq twice); a seq with no row
(e.g. one past the end) sorts like an unsynced event written there."""


def entry_key(entry: LogEntry) -> int:
    """An entry's place in the one order (a damaged row, never pushed, sorts by its seq
    among this device's unsynced events)."""
    if isinstance(entry, StoredEvent):
        return entry.order_key
    return UNSYNCED_BASE + entry.seq


def in_order(
    rows: Callable[[str, Sequence[object]], list[Row]],
    parse: Callable[[Row], LogEntry],
    conversation_id: str | None,
    page: int,
) -> Iterator[LogEntry]:
    """Every entry (of one conversation, or all) oldest first in the one order, page by
    page on the order index (keyset on the order key, never OFFSET): the same list on every
    device syncing with one hub, its own unpushed events last."""
    where, params = ("conversation_id = ? AND ", [conversation_id]) if conversation_id else ("", [])
    after = -1
    while True:
        found = rows(
            f"SELECT {COLUMNS}, {ORDER_KEY} FROM events WHERE {where}{ORDER_KEY} > ?"
            f" ORDER BY {ORDER_KEY} LIMIT ?",
            [*params, after, page],
        )
        for row in found:
            yield parse(row[:-1])
        if len(found) < page:
            return
        after = int(found[-1][-1])


def page_rows(rows: Callable[[str, Sequence[object]], list[Row]], query: EntryQuery) -> list[Row]:
    """The rows of a page of the log (keyset, never OFFSET).

    In entries' order; `before_seq` pages back from a row's place in that order.
    `after_seq` means "written after" (what a follower has not seen yet), so a page with it
    is in seq order: events pulled by a sync are new even when their place is earlier.
    """
    conversation_id, kinds, limit = query.conversation_id, query.kinds, query.limit
    bounds = ""
    params: list[object] = []
    key = "seq" if query.after_seq is not None else ORDER_KEY
    if query.before_seq is not None:
        bounds += f" AND {key} < {'?' if key == 'seq' else KEY_OF_SEQ}"
        params.extend([query.before_seq] * (1 if key == "seq" else 2))
    if query.after_seq is not None:
        bounds += " AND seq > ?"
        params.append(query.after_seq)
    order = "DESC" if query.newest_first else "ASC"
    if conversation_id is None:
        kind_filter = ""
        if kinds is not None:
            kind_filter = f" AND +kind IN ({', '.join('?' for _ in kinds)})"
        return rows(
            f"SELECT {COLUMNS} FROM events WHERE 1{bounds}{kind_filter}"
            f" ORDER BY {key} {order} LIMIT ?",
            [*params, *(kinds or ()), limit],
        )
    # One exact index range per kind, merged: no sort of the whole conversation.
    pages = [
        rows(
            f"SELECT {COLUMNS}, {key} FROM events WHERE conversation_id = ? AND kind = ?"
            f"{bounds} ORDER BY {key} {order} LIMIT ?",
            [conversation_id, kind, *params, limit],
        )
        for kind in (dict.fromkeys(kinds) if kinds else kinds_of(rows, conversation_id))
    ]
    merged = heapq.merge(*pages, key=lambda r: int(r[-1]), reverse=query.newest_first)
    return [row[:-1] for _, row in zip(range(limit), merged, strict=False)]


def kinds_of(rows: Callable[[str, Sequence[object]], list[Row]], conversation_id: str) -> list[str]:
    """Every kind used in a conversation, by skipping along the index (no scan)."""
    kinds: list[str] = []
    while True:
        sql = "SELECT MIN(kind) FROM events WHERE conversation_id = ?"
        params: list[object] = [conversation_id]
        if kinds:
            sql += " AND kind > ?"
            params.append(kinds[-1])
        (kind,) = rows(sql, params)[0]
        if kind is None:
            return kinds
        kinds.append(str(kind))

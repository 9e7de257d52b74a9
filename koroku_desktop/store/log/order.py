"""The order entries are read in: synced events by hub order, then unsynced ones by seq.

Every device syncing with one hub sees the same events in the same order (the hub's), and
its own events not pushed yet after them in the order they were written. Without sync every
`hub_seq` is NULL and the order is plain `seq` order. The key is one SQL expression, indexed
by m007, so ordered reads and keyset paging stay index ranges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from koroku_desktop.domain.events import UNSYNCED_BASE, LogEntry, StoredEvent
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

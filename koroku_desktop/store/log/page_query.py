"""A page of the log by keyset (never OFFSET): the SQL behind `SqliteEventLog.entries`.

Pages are in entries' order (store/log/order.py); `before_seq` pages back from a row's place
in that order. `after_seq` means "written after" (what a follower has not seen yet), so a
page with it is in seq order: events pulled by a sync are new even when their place is
earlier. Within one conversation each kind is one exact index range, and the ranges are
merged, so no page sorts the whole conversation.
"""

from __future__ import annotations

import heapq

from koroku_desktop.domain.events import LogEntry
from koroku_desktop.domain.queries import EntryQuery
from koroku_desktop.store.log.activity import kinds_of
from koroku_desktop.store.log.live_load import Parse, Rows
from koroku_desktop.store.log.order import KEY_OF_SEQ, ORDER_KEY
from koroku_desktop.store.log.rows import COLUMNS


def read_page(rows: Rows, parse: Parse, query: EntryQuery) -> list[LogEntry]:
    """The entries `query` asks for, damaged rows included."""
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
        found = rows(
            f"SELECT {COLUMNS} FROM events WHERE 1{bounds}{kind_filter}"
            f" ORDER BY {key} {order} LIMIT ?",
            [*params, *(kinds or ()), limit],
        )
    else:
        pages = [
            rows(
                f"SELECT {COLUMNS}, {key} FROM events WHERE conversation_id = ? AND kind = ?"
                f"{bounds} ORDER BY {key} {order} LIMIT ?",
                [conversation_id, kind, *params, limit],
            )
            for kind in (dict.fromkeys(kinds) if kinds else kinds_of(rows, conversation_id))
        ]
        merged = heapq.merge(*pages, key=lambda r: int(r[-1]), reverse=query.newest_first)
        found = [row[:-1] for _, row in zip(range(limit), merged, strict=False)]
    return [parse(row) for row in found]

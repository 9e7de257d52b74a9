"""The older part of a long history, read back from the log for compaction.

A history loaded with a tail limit (an imported, uncompacted one) holds only its newest
messages in memory; compaction folds the rest, which it reads here page by page, leaving
out what the live context leaves out (before a clear, set aside, superseded).
"""

from __future__ import annotations

from koroku_desktop.agent.ports import LogReader
from koroku_desktop.domain.events import (
    ClearedEvent,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
    SupersededEvent,
)

PAGE = 5_000


def read_messages(
    log: LogReader,
    conversation_id: str,
    first: int,
    before: int,
    also_rejected: frozenset[int] = frozenset(),
) -> list[StoredEvent]:
    """The live message events that come before the message with seq `before` in entries
    order (the hub's order, then unpushed ones: not seq order once a sync placed pulled
    turns before local ones), back to the latest clear, read page by page, oldest first.
    Only seqs from `first` on (an old compaction covered the seqs below it).

    Messages a later `rejected` event set aside (or in `also_rejected`), and turns a
    `superseded` event replaced, are left out, as in the live context. Blocking: call it in
    a worker thread.
    """
    found: list[StoredEvent] = []
    rejected: set[int] = set()
    superseded: set[str] = set()
    cursor: int | None = before
    while cursor is not None:
        page = log.entries(conversation_id, before_seq=cursor, limit=PAGE, newest_first=True)
        cursor = page[-1].seq if len(page) == PAGE else None
        for entry in page:
            if not isinstance(entry, StoredEvent):
                continue
            event = entry.event
            if isinstance(event, ClearedEvent):  # nothing before a clear is live
                cursor = None
                break
            if isinstance(event, MessageEvent) and entry.seq >= first:
                found.append(entry)
            elif isinstance(event, RejectedEvent):
                rejected.add(event.rejected_seq)
            elif isinstance(event, SupersededEvent):
                superseded.add(event.superseded_turn_id)
    found.reverse()
    rejected |= also_rejected
    superseded.discard("")  # events without a turn id are never left out
    return [m for m in found if m.seq not in rejected and m.turn_id not in superseded]

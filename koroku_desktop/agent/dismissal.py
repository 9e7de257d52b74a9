"""Dismissing a remembered passage: an event in the log, read by the surfacer on later turns.

The dismissal changes nothing already sent (the user message keeps its passages, so its
request stays reproducible); it only stops the passage from surfacing again in the
conversation (see `memories.dismissed_passages`). It needs no turn lease: the projection
skips the event, so it may land between a running turn's events.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from koroku_desktop.domain.events import (
    LogEntry,
    MessageEvent,
    RememberedDismissedEvent,
    StoredEvent,
)
from koroku_desktop.domain.remembered import parse_remembered

if TYPE_CHECKING:
    from koroku_desktop.agent.loop import Agent


def _event_at(entries: list[LogEntry], seq: int) -> StoredEvent | None:
    found = next((e for e in entries if e.seq == seq), None)
    return found if isinstance(found, StoredEvent) else None


async def dismiss_remembered(agent: Agent, passage_seq: int, surfaced_seq: int) -> StoredEvent:
    """Record that passage `passage_seq`, surfaced with message `surfaced_seq`, is not
    relevant; fold it (the window greys the chip). Raises ValueError for a passage that the
    message did not carry, `sqlite3.Error` when the write fails."""

    def write() -> StoredEvent:
        surfaced = _event_at(agent.log.entries(after_seq=surfaced_seq - 1, limit=1), surfaced_seq)
        passage = _event_at(agent.log.entries(after_seq=passage_seq - 1, limit=1), passage_seq)
        if surfaced is None or surfaced.conversation_id != agent.conversation_id:
            raise ValueError(f"message #{surfaced_seq} is not in this conversation")
        if not isinstance(surfaced.event, MessageEvent) or not any(
            r.seq == passage_seq
            for part in surfaced.event.parts
            for r in parse_remembered(part) or []
        ):
            raise ValueError(f"message #{surfaced_seq} did not surface #{passage_seq}")
        event = RememberedDismissedEvent(
            passage_seq=passage_seq,
            surfaced_seq=surfaced_seq,
            passage_event_id=passage.event_id or None if passage else None,
            surfaced_turn_id=surfaced.turn_id or None,
        )
        (stored,) = agent.log.append(agent.conversation_id, [event])
        return stored

    stored = await asyncio.to_thread(write)
    await agent.catch_up()
    return stored

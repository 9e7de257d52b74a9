"""Which messages are live: compactions cover events by id, in the one order of entries.

Several devices append to copies of one log and merge them through a sync hub. Every device
must project the same live context, so the projection reads events in one order that every
device agrees on (`StoredEvent.order_key`): events synced through the hub in the hub's order,
then this device's unsynced events in the order they were written. A device pushes whole
turns, one transaction each, so a turn's events are contiguous in the hub's order; turns made
on two devices while apart follow each other whole, never interleaved. The chat and the
viewer read entries in the same order, so what a person sees is what the model is sent.

- **Clears.** Everything before the last `cleared` in that order is out. A turn made on
  another device that reaches the hub after the clear comes after it, so it stays live, on
  every device (the clear's maker had not seen it).
- **Compactions cover by id.** A compaction lists the message ids it summarised
  (`covered_ids`) and the compaction whose summary it extended (`base_id`). The head is
  the last compaction in that order; the covered set is the union of `covered_ids` along
  the head's `base_id` chain. The live context is the head's summary, then every message
  after the last clear that the chain does not cover (nor a `rejected` event set aside),
  in that order. So turns another device added while this one compacted stay live.
- **Two compactions made apart** (same base, on two devices): the later in that order wins
  (its summary leads); the other is overtaken, and every message only it covered comes back
  word for word. Nothing is lost from both summary and context; the next compaction folds
  them in again.
- **Old compactions** (no `covered_ids`, written before this rule, in one log) cover
  exactly what they covered then: the messages with a seq below their `kept_from_seq`.
  Their chain ends there (they already covered everything older).

Before a hub has placed them, a device's own new events come after everything synced; when
a pull brings events the hub placed before them, the projection is built again (the
`ContextView` sees an event that does not come last). The result is the message order
`project` (domain/projection.py) then makes Gemini-proof.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
)
from koroku_desktop.domain.liveness import Liveness


def turn_of(stored: StoredEvent) -> str:
    """The turn an event belongs to (its own id, or its seq, when it has none)."""
    return stored.turn_id or stored.event_id or f"#{stored.seq}"


def in_entries_order(events: Iterable[StoredEvent]) -> list[StoredEvent]:
    """`events` in the one order of entries (`StoredEvent.order_key`)."""
    return sorted(events, key=lambda s: s.order_key)


def whole_turns_together(events: Sequence[StoredEvent]) -> list[StoredEvent]:
    """`events` with each turn's events moved up to its first one (a stable grouping): how a
    merge without hub positions writes another log's events, never interleaving two turns."""
    turns: dict[str, list[StoredEvent]] = {}
    for stored in events:
        turns.setdefault(turn_of(stored), []).append(stored)
    return [stored for turn in turns.values() for stored in turn]


def chain_of(
    head: StoredEvent | None,
    compactions: Sequence[StoredEvent] | Callable[[str], StoredEvent | None],
) -> list[StoredEvent]:
    """`head` and the compactions its `base_id`s lead back to: among `compactions`, or as
    found by calling it with an id (a store reads only the chain that way)."""
    if callable(compactions):
        find = compactions
    else:
        find = {c.event_id: c for c in compactions if c.event_id}.get
    chain: list[StoredEvent] = []
    seen: set[str] = set()
    current = head
    while current is not None and isinstance(current.event, CompactionEvent):
        chain.append(current)
        seen.add(current.event_id)
        base = current.event.base_id
        if current.event.covered_ids is None or not base or base in seen:
            break
        current = find(base)
    return chain


def covered_by(chain: Sequence[StoredEvent], tail: Sequence[StoredEvent]) -> set[str]:
    """The ids of the messages a chain covers; an old compaction in it covers the messages
    of `tail` with a seq below its `kept_from_seq`. Messages without ids are named by
    `#seq`."""
    covered: set[str] = set()
    for stored in chain:
        event = stored.event
        assert isinstance(event, CompactionEvent)
        if event.covered_ids is not None:
            covered.update(event.covered_ids)
            continue
        covered.update(
            message_key(m)
            for m in tail
            if isinstance(m.event, MessageEvent) and m.seq < event.kept_from_seq
        )
    return covered


def message_key(stored: StoredEvent) -> str:
    """How coverage and rejections name a message: its id, or `#seq` without one."""
    return stored.event_id or f"#{stored.seq}"


@dataclass(frozen=True)
class Live:
    """The live part of a conversation: the head boundary and the live messages in order."""

    boundary: StoredEvent | None
    """The head compaction (its summary leads), else the last clear, else None."""
    messages: list[StoredEvent]
    rejected: list[StoredEvent]
    """The `rejected` events after the last clear (their messages are not in `messages`)."""
    covered: frozenset[str]
    chain: tuple[StoredEvent, ...] = ()
    """The head compaction and the ones its `base_id`s lead back to."""


def live_part(events: Iterable[StoredEvent]) -> Live:
    """The live context of one conversation's events (given in any order; see the module).

    `events` may leave out messages that are surely covered (a store reads only what may be
    live), but must hold every compaction and clear after the last clear.
    """
    ordered = in_entries_order(events)
    start = 0
    boundary: StoredEvent | None = None
    for index, stored in enumerate(ordered):
        if isinstance(stored.event, ClearedEvent):
            start, boundary = index + 1, stored
    tail = ordered[start:]
    compactions = [s for s in tail if isinstance(s.event, CompactionEvent)]
    if compactions:
        boundary = compactions[-1]
    chain = chain_of(boundary, compactions)
    covered = covered_by(chain, tail)
    rejected = [s for s in tail if isinstance(s.event, RejectedEvent)]
    messages = [
        s for s in tail if isinstance(s.event, MessageEvent) and message_key(s) not in covered
    ]
    live = not_set_aside(messages, rejected)
    return Live(boundary, live, rejected, frozenset(covered), tuple(chain))


def restated_by_id(events: Iterable[StoredEvent]) -> CompactionEvent | None:
    """When the head's chain holds an old compaction (it covers by this log's seqs, which
    another device's log numbers differently): a compaction with the head's summary that
    covers exactly the same messages by id, extending nothing. Appended before a device first
    pushes, it makes every device read the same coverage. None when nothing needs it."""
    ordered = in_entries_order(events)
    live = live_part(ordered)
    head = live.boundary
    old = [
        c
        for c in live.chain
        if isinstance(c.event, CompactionEvent) and c.event.covered_ids is None
    ]
    if not old or head is None or not isinstance(head.event, CompactionEvent):
        return None
    covered = [
        m.event_id
        for m in ordered
        if isinstance(m.event, MessageEvent) and m.event_id and message_key(m) in live.covered
    ]
    return head.event.model_copy(update={"covered_ids": covered, "base_id": None})


def not_set_aside(
    messages: Sequence[StoredEvent], rejected: Sequence[StoredEvent]
) -> list[StoredEvent]:
    """`messages` but for those a `rejected` event among `rejected` sets aside (by id, or by
    seq for a message written without one): the liveness rule (domain/liveness.py)."""
    rule = Liveness.of(r for r in rejected if isinstance(r.event, RejectedEvent))
    return [s for s in messages if rule.left_out(s) is None]

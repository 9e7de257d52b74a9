"""Which messages are live: compactions cover events by id, turns merge whole, in one order.

Several devices append to copies of one log and merge them (by event id). Whatever order
the merged copies hold their rows in, every device must project the same live context, so
the projection does not read the rows' order across turns; it puts them in one order:

- **Turn order.** Events are grouped by turn id; turns are ordered by their smallest event
  id (a UUIDv7: the time the turn first wrote, on its device's clock), and the events of a
  turn keep the order of the entries they came in. One device's turns run one after the
  other under the turn lease, so on one device this is the order they were written in;
  turns made on two devices while apart follow each other whole, never interleaved. An
  append takes ids after every id already in the log (`ids.observe`), so a turn made after
  a merge comes after the merged turns even when the other device's clock runs ahead.
- **Clears.** Everything before the last `cleared` in that order is out.
- **Compactions cover by id.** A compaction lists the message ids it summarised
  (`covered_ids`) and the compaction whose summary it extended (`base_id`). The head is
  the last compaction in turn order; the covered set is the union of `covered_ids` along
  the head's `base_id` chain. The live context is the head's summary, then every message
  after the last clear that the chain does not cover (nor a `rejected` event set aside),
  in turn order. So turns another device added while this one compacted stay live.
- **Two compactions made apart** (same base, on two devices): the later in turn order wins
  (its summary leads); the other is overtaken, and every message only it covered comes back
  word for word. Nothing is lost from both summary and context; the next compaction folds
  them in again.
- **Old compactions** (no `covered_ids`, written before this rule, in one log) cover
  exactly what they covered then: the messages before them with a seq below their
  `kept_from_seq`. Their chain ends there (they already covered everything older).

The result is the message order `project` (domain/projection.py) then makes Gemini-proof.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
)


def turn_of(stored: StoredEvent) -> str:
    """The turn an event belongs to (its own id, or its seq, when it has none)."""
    return stored.turn_id or stored.event_id or f"#{stored.seq}"


def turn_keys(events: Iterable[StoredEvent]) -> dict[str, str]:
    """Each turn's sort key: its smallest event id ("" for events without ids)."""
    keys: dict[str, str] = {}
    for stored in events:
        turn = turn_of(stored)
        key = keys.get(turn)
        if key is None or stored.event_id < key:
            keys[turn] = stored.event_id
    return keys


def in_turn_order(
    events: Sequence[StoredEvent], keys: Mapping[str, str] | None = None
) -> list[StoredEvent]:
    """`events` (in entries order) as whole turns in turn order (a stable sort)."""
    known = turn_keys(events) if keys is None else keys
    return sorted(events, key=lambda s: known.get(turn_of(s), s.event_id))


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


def covered_by(chain: Sequence[StoredEvent], ordered: Sequence[StoredEvent]) -> set[str]:
    """The ids of the messages a chain covers; `ordered` is the turn-ordered tail holding
    the chain (what an old compaction's seqs are resolved against). Messages without ids
    are named by `#seq`."""
    covered: set[str] = set()
    position = {id(s): i for i, s in enumerate(ordered)}
    for stored in chain:
        event = stored.event
        assert isinstance(event, CompactionEvent)
        if event.covered_ids is not None:
            covered.update(event.covered_ids)
            continue
        end = position.get(id(stored), len(ordered))
        covered.update(
            message_key(m)
            for m in ordered[:end]
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


def live_part(events: Sequence[StoredEvent], keys: Mapping[str, str] | None = None) -> Live:
    """The live context of one conversation's events (any entries order; see the module).

    `events` may leave out messages that are surely covered (a store reads only what may be
    live), but must hold every compaction and clear after the last clear.
    """
    ordered = in_turn_order(events, keys)
    start = 0
    boundary: StoredEvent | None = None
    for index, stored in enumerate(ordered):
        if isinstance(stored.event, ClearedEvent):
            start, boundary = index + 1, stored
    tail = ordered[start:]
    compactions = [s for s in tail if isinstance(s.event, CompactionEvent)]
    if compactions:
        boundary = compactions[-1]
    covered = covered_by(chain_of(boundary, compactions), tail)
    rejected = [s for s in tail if isinstance(s.event, RejectedEvent)]
    out_ids = {r.event.rejected_id for r in rejected if isinstance(r.event, RejectedEvent)}
    out_seqs = {
        r.event.rejected_seq
        for r in rejected
        if isinstance(r.event, RejectedEvent) and r.event.rejected_id is None
    }
    messages = [
        s
        for s in tail
        if isinstance(s.event, MessageEvent)
        and message_key(s) not in covered
        and not (s.event_id and s.event_id in out_ids)
        and s.seq not in out_seqs
    ]
    return Live(boundary, messages, rejected, frozenset(covered))

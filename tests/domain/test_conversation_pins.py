"""Pins and the quick-ask conversation in the registry fold (domain/conversations.py): a pin
is a `conversation` event, the later of pin/unpin wins in the log's order (a hub's order
first), and quick ask's conversation is found by its purpose, not its title."""

from __future__ import annotations

from koroku_desktop.domain.conversations import (
    QUICK_ASKS,
    Activity,
    fold_conversations,
    most_recent,
    pinned_first,
    quick_asks,
)
from koroku_desktop.domain.events import ConversationEvent, StoredEvent

A, B, C = (f"0190aaaa-0000-7000-8000-00000000000{n}" for n in (1, 2, 3))


def stored(
    seq: int, cid: str, action: str, *, hub: int | None = None, **fields: str
) -> StoredEvent:
    event = ConversationEvent(action=action, **fields)  # type: ignore[arg-type]
    return StoredEvent(seq, cid, 1000.0 + seq, event, f"e{seq}", hub_seq=hub)


def test_pin_and_unpin_the_later_wins() -> None:
    events = [stored(1, A, "created"), stored(2, A, "pinned")]
    assert fold_conversations(events, {})[A].pinned
    events.append(stored(3, A, "unpinned"))
    assert not fold_conversations(events, {})[A].pinned
    events.append(stored(4, A, "pinned"))
    assert fold_conversations(events, {})[A].pinned
    # given out of order, the fold still reads them in the log's order
    assert fold_conversations(list(reversed(events)), {})[A].pinned


def test_the_hub_order_decides_between_two_devices() -> None:
    """A pin made here (seq 9) that the hub placed before another device's unpin (seq 5
    here, synced later but earlier in the hub's order) loses to that unpin."""
    events = [
        stored(1, A, "created", hub=1),
        stored(9, A, "pinned", hub=2),
        stored(5, A, "unpinned", hub=3),
    ]
    assert not fold_conversations(events, {})[A].pinned
    # a pin not synced yet comes after everything synced: it wins until the hub says otherwise
    events.append(stored(10, A, "pinned"))
    assert fold_conversations(events, {})[A].pinned


def test_a_pin_keeps_through_archive_rename_and_restore() -> None:
    events = [
        stored(1, A, "created"),
        stored(2, A, "pinned"),
        stored(3, A, "renamed", title="Kept"),
        stored(4, A, "archived"),
        stored(5, A, "restored"),
    ]
    conv = fold_conversations(events, {})[A]
    assert (conv.pinned, conv.title, conv.archived) == (True, "Kept", False)


def test_pinned_first_keeps_the_order_within_each_group() -> None:
    events = [stored(1, A, "created"), stored(2, B, "created"), stored(3, C, "created")]
    events.append(stored(4, B, "pinned"))
    every = fold_conversations(events, {})
    ordered = pinned_first([every[C], every[B], every[A]])
    assert [c.id for c in ordered] == [B, C, A]


def test_quick_asks_is_found_by_purpose_whatever_its_title() -> None:
    events = [
        stored(1, A, "created", title="Quick asks"),  # a person's conversation of that name
        stored(2, B, "created", title="Quick asks", purpose=QUICK_ASKS),
        stored(3, B, "renamed", title="Little questions"),
    ]
    assert quick_asks(fold_conversations(events, {}).values()).id == B  # type: ignore[union-attr]
    # two made at once (two devices): both settle on the older one
    events.append(stored(4, C, "created", title="Quick asks", purpose=QUICK_ASKS))
    assert quick_asks(fold_conversations(events, {}).values()).id == B  # type: ignore[union-attr]
    # deleted: the other one, and none once both are
    events.append(stored(5, B, "deleted"))
    assert quick_asks(fold_conversations(events, {}).values()).id == C  # type: ignore[union-attr]
    events.append(stored(6, C, "deleted"))
    assert quick_asks(fold_conversations(events, {}).values()) is None


def test_a_quick_ask_does_not_make_quick_asks_the_conversation_opened_by_default() -> None:
    events = [stored(1, A, "created"), stored(2, B, "created", purpose=QUICK_ASKS)]
    activity = {A: Activity(A, 2, 10, 1.0), B: Activity(B, 2, 20, 2.0)}  # B asked last
    every = fold_conversations(events, activity)
    assert most_recent(every.values()).id == A  # type: ignore[union-attr]
    only_quick = fold_conversations([*events, stored(30, A, "deleted")], activity)
    assert most_recent(only_quick.values()).id == B  # type: ignore[union-attr]

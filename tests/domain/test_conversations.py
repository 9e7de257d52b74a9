"""The conversation registry folded from `conversation` events (domain/conversations.py)."""

from __future__ import annotations

import pytest

from koroku_desktop.domain.conversations import (
    NEW_TITLE,
    UNTITLED,
    Activity,
    AmbiguousConversation,
    UnknownConversation,
    clean_title,
    fold_conversations,
    most_recent,
    resolve,
)
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.events import TITLE_LIMIT, ConversationEvent, StoredEvent

A, B = "0190aaaa-0000-7000-8000-000000000001", "0190aaab-0000-7000-8000-000000000002"


def stored(seq: int, cid: str, action: str, title: str | None = None) -> StoredEvent:
    event = ConversationEvent(action=action, title=title)  # type: ignore[arg-type]
    return StoredEvent(seq, cid, 1000.0 + seq, event, f"e{seq}")


def test_the_log_first_conversation_is_one_conversation_with_everything_in_it() -> None:
    found = fold_conversations([], {"default": Activity("default", 40, 80, 1080.0, 1001.0)})
    (only,) = found.values()
    assert (only.id, only.title, only.messages, only.created) == ("default", UNTITLED, 40, False)
    assert (only.created_at, only.last_at) == (1001.0, 1080.0)


def test_created_titled_renamed_deleted_restored() -> None:
    events = [stored(1, A, "created"), stored(2, A, "titled", "Model's")]
    assert fold_conversations(events, {})[A].title == "Model's"
    events += [stored(3, A, "renamed", "Mine"), stored(4, A, "titled", "Model again")]
    conv = fold_conversations(events, {})[A]
    assert (conv.title, conv.renamed) == ("Mine", True)  # the person's name wins
    events += [stored(5, A, "deleted")]
    assert fold_conversations(events, {})[A].deleted
    events += [stored(6, A, "restored")]
    assert not fold_conversations(events, {})[A].deleted
    fresh = fold_conversations([stored(7, B, "created")], {})[B]
    assert (fresh.title, fresh.origin, fresh.created) == (NEW_TITLE, "koroku", True)


def test_most_recent_is_by_seq_and_skips_deleted_and_archived() -> None:
    events = [stored(1, A, "created"), stored(2, B, "created")]
    activity = {A: Activity(A, 2, 10, 1.0), B: Activity(B, 2, 5, 999.0)}
    every = fold_conversations(events, activity)
    assert most_recent(every.values()).id == A  # type: ignore[union-attr]  # seq, not clock
    every = fold_conversations([*events, stored(11, A, "archived")], activity)
    assert most_recent(every.values()).id == B  # type: ignore[union-attr]
    every = fold_conversations([*events, stored(11, A, "deleted"), stored(12, B, "deleted")], {})
    assert most_recent(every.values()) is None


def test_resolve_by_id_prefix_or_title() -> None:
    events = [stored(1, A, "created", "Taxes"), stored(2, B, "created", "taxes 2025")]
    every = fold_conversations(events, {}).values()
    assert resolve(every, A).id == A
    assert resolve(every, B[:8]).id == B
    assert resolve(every, "Taxes").id == A
    assert resolve(every, "TAXES 2025").id == B
    with pytest.raises(AmbiguousConversation, match="matches 2 conversations"):
        resolve(every, "0190")
    with pytest.raises(UnknownConversation, match="no conversation “nope”"):
        resolve(every, "nope")
    with pytest.raises(UnknownConversation):
        resolve(every, "019")  # too short to be a prefix
    with pytest.raises(UnknownConversation):
        resolve(every, "   ")


def test_titles_are_one_line_and_bounded() -> None:
    assert clean_title("  a\n  title\t here ") == "a title here"
    long = clean_title("x" * 10_000)
    assert len(long) == TITLE_LIMIT and long.endswith("…")
    with pytest.raises(RefusedError):
        clean_title(" \n ")


def test_renaming_the_log_first_conversation_does_not_make_it_the_most_recent() -> None:
    events = [stored(3, A, "created"), stored(9, "default", "renamed", "Old chat")]
    activity = {
        "default": Activity("default", 2, 2, 1002.0, 1001.0),
        A: Activity(A, 2, 5, 1005.0, 1004.0),
    }
    found = fold_conversations(events, activity)
    assert found["default"].title == "Old chat"
    assert found["default"].last_seq == 2
    recent = most_recent(found.values())
    assert recent is not None and recent.id == A


def test_renaming_the_log_first_conversation_keeps_its_start() -> None:
    activity = {"default": Activity("default", 4, 5, 1005.0, 1001.0)}
    conv = fold_conversations([stored(9, "default", "renamed", "Early days")], activity)["default"]
    assert (conv.title, conv.created_at, conv.last_seq, conv.created) == (
        "Early days",
        1001.0,
        5,  # a rename is not activity
        False,
    )

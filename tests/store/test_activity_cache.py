"""The conversation list's activity read without counts is kept between reads and brought up
to date from what was written since — by this log or another process's connection — and is
always what a full read of the index says."""

from __future__ import annotations

from pathlib import Path

from koroku_desktop.domain.events import ConversationEvent
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.log.activity import conversation_activity
from tests.support.builders import model, user


def full(log: SqliteEventLog) -> dict[str, object]:
    return dict(conversation_activity(log._rows, counts=False))


def test_activity_follows_new_rows_from_this_log_and_another_writer(
    log: SqliteEventLog, db_path: Path
) -> None:
    log.append("a", [ConversationEvent(action="created", title="A"), user("one"), model("two")])
    log.append("b", [ConversationEvent(action="created", title="B")])
    assert log.conversation_activity(counts=False) == full(log)
    first = log.conversation_activity(counts=False)
    assert first["b"].last_seq == 0  # only its `conversation` event so far

    other = SqliteEventLog(db_path)  # another process's writer, on the same file
    try:
        other.append("b", [user("three")])
        other.append("c", [ConversationEvent(action="created", title="C"), user("four")])
        log.append("a", [ConversationEvent(action="renamed", title="A2")])
    finally:
        other.close()
    after = log.conversation_activity(counts=False)
    assert after == full(log)
    assert after["b"].last_seq > first["a"].last_seq
    assert after["a"] == first["a"]  # a rename is no activity
    assert set(after) == {"a", "b", "c"}
    assert log.conversation_activity(counts=True)["b"].messages == 1

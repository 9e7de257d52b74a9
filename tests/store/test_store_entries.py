"""entries(): keyset paging over the whole log, for the history viewer and export."""

from __future__ import annotations

import pytest

from koroku_desktop.domain.events import ClearedEvent, CompactionEvent
from koroku_desktop.store import SqliteEventLog
from tests.support.builders import user


@pytest.fixture
def mixed(log: SqliteEventLog) -> SqliteEventLog:
    """Seqs 1-12 spread over two conversations and three kinds."""
    for i in range(4):
        log.append("c1", [user(f"c1-{i}")])
        log.append("c2", [user(f"c2-{i}")])
    log.append("c1", [CompactionEvent(summary="s", covers_up_to_seq=3, kept_from_seq=5)])
    log.append("c2", [ClearedEvent()])
    log.append("c1", [user("c1-late"), ClearedEvent()])
    return log


def seqs(entries: list) -> list[int]:  # type: ignore[type-arg]
    return [e.seq for e in entries]


def test_all_conversations_oldest_and_newest_first(mixed: SqliteEventLog) -> None:
    assert seqs(mixed.entries()) == list(range(1, 13))
    assert seqs(mixed.entries(newest_first=True, limit=3)) == [12, 11, 10]


def test_one_conversation_merges_kinds_in_seq_order(mixed: SqliteEventLog) -> None:
    assert seqs(mixed.entries("c1")) == [1, 3, 5, 7, 9, 11, 12]
    assert seqs(mixed.entries("c1", newest_first=True, limit=4)) == [12, 11, 9, 7]


def test_keyset_paging_walks_everything_once(mixed: SqliteEventLog) -> None:
    seen: list[int] = []
    before = None
    while page := mixed.entries("c1", before_seq=before, newest_first=True, limit=2):
        seen += seqs(page)
        before = page[-1].seq
    assert seen == [12, 11, 9, 7, 5, 3, 1]
    forward: list[int] = []
    after = 0
    while page := mixed.entries(after_seq=after, limit=5):
        forward += seqs(page)
        after = page[-1].seq
    assert forward == list(range(1, 13))


def test_filters(mixed: SqliteEventLog) -> None:
    assert seqs(mixed.entries(kinds=["cleared"])) == [10, 12]
    assert seqs(mixed.entries("c1", kinds=["compaction", "cleared", "cleared"])) == [9, 12]
    assert seqs(mixed.entries("c2", after_seq=2, before_seq=8)) == [4, 6]
    assert mixed.entries(kinds=[]) == []
    assert mixed.entries(limit=0) == []
    assert mixed.entries("nobody") == []

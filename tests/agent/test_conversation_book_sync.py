"""`ConversationBook` on a real SQLite log: quick ask's conversation made once and found by
its purpose, and a book that read the log before a sync still decides a pin by the hub's
order after it (the events it had read get their hub places when pushed)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.domain.conversations import QUICK_ASKS, QUICK_ASKS_TITLE
from koroku_desktop.domain.events import ConversationEvent, StoredEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.store import SqliteEventLog


@pytest.fixture
def log(tmp_path: Path) -> Iterator[SqliteEventLog]:
    opened = SqliteEventLog(tmp_path / "koroku.db")
    yield opened
    opened.close()


def test_quick_asks_is_made_once_and_kept_through_a_rename_and_a_second_book(
    log: SqliteEventLog,
) -> None:
    book = ConversationBook(log)
    made = book.quick_asks()
    assert (made.title, made.purpose) == (QUICK_ASKS_TITLE, QUICK_ASKS)
    book.rename(made.id, "Small questions")
    other = ConversationBook(log)  # another process's view of the same log
    assert other.quick_asks().id == made.id
    assert [c.id for c in other.all().values() if c.purpose == QUICK_ASKS] == [made.id]
    book.delete(made.id)  # deleted: the next quick ask starts a new one
    again = other.quick_asks()
    assert again.id != made.id and again.title == QUICK_ASKS_TITLE


def test_a_book_read_before_a_sync_decides_by_the_hub_order_after_it(
    log: SqliteEventLog,
) -> None:
    book = ConversationBook(log)
    cid = book.create("Taxes").id
    book.pin(cid)
    assert book.get(cid).pinned  # type: ignore[union-attr]  # read, and kept, before the sync
    # The sync: this device's events are pushed (hub places 1, 2), and another device's
    # unpin comes in after them in the hub's order (place 3).
    ours = [e for e in log.entries(cid) if isinstance(e, StoredEvent)]
    log.record_hub_order([(e.event_id, n) for n, e in enumerate(ours, 1)])
    theirs = StoredEvent(0, cid, 2000.0, ConversationEvent(action="unpinned"), new_id())
    log.merge([replace(theirs, writer="app@other")], hub_seqs=[3])
    assert not book.get(cid).pinned  # type: ignore[union-attr]
    # And the other way: their pin placed before our later unpin loses to it.
    book.unpin(cid)
    late = [e for e in log.entries(cid) if isinstance(e, StoredEvent) and e.hub_seq is None]
    log.record_hub_order([(e.event_id, 5) for e in late])
    earlier = StoredEvent(0, cid, 2001.0, ConversationEvent(action="pinned"), new_id())
    log.merge([earlier], hub_seqs=[4])
    assert not book.get(cid).pinned  # type: ignore[union-attr]

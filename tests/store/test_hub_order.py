"""Entries' order with sync: events synced through the hub in hub order, then this device's
unsynced events in the order they were written — one order for pages and paging (the chat,
the viewer) and for the live context the model is sent (domain/coverage.py)."""

from __future__ import annotations

from pathlib import Path

from koroku_desktop.domain.events import UNSYNCED_BASE, ClearedEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from tests.support.builders import user as said


def remote(text: str, conversation: str = "c") -> StoredEvent:
    return StoredEvent(0, conversation, 1.0, said(text), new_id(), new_id(), "app@other")


def texts(entries: list[object]) -> list[str]:
    found = []
    for e in entries:
        assert isinstance(e, StoredEvent)
        assert isinstance(e.event, MessageEvent)
        part = e.event.parts[0]
        assert isinstance(part, TextPart)
        found.append(part.text)
    return found


def test_pulled_events_come_before_unsynced_local_ones(tmp_path: Path) -> None:
    with SqliteEventLog(tmp_path / "k.db") as log:
        mine = log.append("c", [said("mine 1")]) + log.append("c", [said("mine 2")])
        pulled = log.merge([remote("theirs 1"), remote("theirs 2")], [1, 2])
        assert [s.seq for s in pulled] == [3, 4]  # written after, placed before
        order = ["theirs 1", "theirs 2", "mine 1", "mine 2"]
        assert texts(log.entries("c")) == order
        assert texts(log.entries()) == order
        # The live context is in the same order: what the person sees is what is sent.
        assert texts(log.load_live("c").events) == order
        assert [e.order_key for e in log.load_live("c").events] == [
            1,
            2,
            UNSYNCED_BASE + mine[0].seq,
            UNSYNCED_BASE + mine[1].seq,
        ]
        assert texts(log.entries("c", newest_first=True, limit=2)) == order[::-1][:2]
        # Paging back from a row goes by its place in the order...
        back = log.entries("c", newest_first=True, before_seq=mine[0].seq)
        assert texts(back) == ["theirs 2", "theirs 1"]
        # ...and `after_seq` still means "written after" (what a follower has not seen).
        assert texts(log.entries("c", after_seq=mine[1].seq)) == ["theirs 1", "theirs 2"]
        # Pushing ours keeps the order; a re-delivery changes nothing.
        log.record_hub_order([(mine[0].event_id, 3), (mine[1].event_id, 4)])
        assert log.merge(pulled, [1, 2]) == []
        assert texts(log.entries("c")) == order
        assert texts(log.load_live("c").events) == order
        assert [e.hub_seq for e in log.load_live("c").events] == [1, 2, 3, 4]
        assert log.count() == 4


def test_a_pulled_event_already_here_gets_its_position_not_a_copy(tmp_path: Path) -> None:
    with SqliteEventLog(tmp_path / "k.db") as log:
        (pushed,) = log.append("c", [said("pushed, then the process died")])
        again = log.merge([pushed], [7])
        assert again == []
        assert log.count() == 1
        log.append("c", [said("later")])
        assert texts(log.entries("c")) == ["pushed, then the process died", "later"]


def test_a_pulled_clear_cuts_what_the_hub_placed_before_it(tmp_path: Path) -> None:
    with SqliteEventLog(tmp_path / "k.db") as log:
        log.merge([remote("old")], [1])
        offline = log.append("c", [said("written offline")])
        clear = StoredEvent(0, "c", 2.0, ClearedEvent(), new_id(), new_id(), "app@other")
        log.merge([clear], [2])
        live = log.load_live("c")
        assert isinstance(live.boundary, StoredEvent) and live.boundary.event_id == clear.event_id
        # The other device cleared what it had seen; this device's offline turn was not
        # among it: it comes after the clear in the one order, so it stays live (and will on
        # the other device too, once pushed: the hub places it after the clear).
        assert texts(live.events) == ["written offline"]
        log.record_hub_order([(offline[0].event_id, 3)])
        assert texts(log.load_live("c").events) == ["written offline"]
        assert texts([e for e in log.entries("c") if isinstance(e.event, MessageEvent)]) == [
            "old",
            "written offline",
        ]
        log.append("c", [said("after the merge")])
        assert texts(log.load_live("c").events) == ["written offline", "after the merge"]

"""The EventLog contract, run against every implementation: the SQLite file, the in-memory
log, and the SQLite file of a device whose every event is synced (read in hub order). Two
handles on one store stand for two processes: `store.open()` gives another handle on the
same data."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    MessageEvent,
    StoredEvent,
)
from koroku_desktop.domain.ids import id_time
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.log.memory_log import InMemoryEventLog
from tests.support.builders import model, user

Log = SqliteEventLog | InMemoryEventLog


@dataclass
class Store:
    """One store of events and a way to open more handles on it."""

    open: Callable[[str], Log]
    opened: list[Log] = field(default_factory=list)

    def handle(self, writer: str = "test@host") -> Log:
        log = self.open(writer)
        self.opened.append(log)
        return log


class PushedAtOnceLog(SqliteEventLog):
    """The SQLite log of a device that syncs after every write: each event gets its hub
    position at once, so every read goes through the hub-order key (store/log/order.py)."""

    def append(self, *args: object, **kwargs: object) -> list[StoredEvent]:
        return self._pushed(super().append(*args, **kwargs))  # type: ignore[arg-type]

    def merge(self, incoming: object, hub_seqs: object = None) -> list[StoredEvent]:
        merged = super().merge(incoming, hub_seqs)  # type: ignore[arg-type]
        return merged if hub_seqs is not None else self._pushed(merged)

    def _pushed(self, stored: list[StoredEvent]) -> list[StoredEvent]:
        with sqlite3.connect(self.path) as conn:
            (top,) = conn.execute("SELECT COALESCE(MAX(hub_seq), 0) FROM events").fetchone()
        self.record_hub_order([(s.event_id, top + n) for n, s in enumerate(stored, 1)])
        return stored


class EventLogContract:
    """What every EventLog does; a subclass per implementation says how its store is opened
    (eventsourcing's pattern: a new implementation is one small subclass)."""

    def make_store(self, tmp_path: Path) -> Store:
        raise NotImplementedError

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        made = self.make_store(tmp_path)
        yield made
        for log in made.opened:
            if isinstance(log, SqliteEventLog):
                log.close()

    def test_append_gives_increasing_seqs_and_unique_time_ordered_ids(self, store: Store) -> None:
        log = store.handle("ask@box")
        first = log.append("c1", [user("one"), model("two")])
        second = log.append("c1", [user("three")], turn_id="turn-x")
        seqs = [s.seq for s in first + second]
        assert seqs == sorted(seqs) and len(set(seqs)) == 3
        ids = [s.event_id for s in first + second]
        assert len(set(ids)) == 3
        assert all(uuid.UUID(i).version == 7 for i in ids)
        assert ids == sorted(ids), "UUIDv7 made in one process sort in the order they were made"
        assert abs(id_time(ids[0]) - first[0].created_at) < 5
        assert {s.turn_id for s in first} == {first[0].event_id}, "default turn: the first id"
        assert second[0].turn_id == "turn-x"
        assert {s.writer for s in first + second} == {"ask@box"}

    def test_ids_turns_and_writer_read_back_from_another_handle(self, store: Store) -> None:
        written = store.handle("chat@a").append("c1", [user("hi"), model("hello")], turn_id="t1")
        read = store.handle("app@b").entries("c1")
        assert [
            (e.seq, e.event_id, e.turn_id, e.writer) for e in read if isinstance(e, StoredEvent)
        ] == [(s.seq, s.event_id, "t1", "chat@a") for s in written]

    def test_merge_is_idempotent_on_the_event_id(self, store: Store, tmp_path: Path) -> None:
        elsewhere = InMemoryEventLog(writer="ask@other")
        remote = elsewhere.append("c1", [user("from afar"), model("answer")], turn_id="remote-turn")
        log = store.handle()
        log.append("c1", [user("local")])
        merged = log.merge(remote)
        assert [m.event_id for m in merged] == [r.event_id for r in remote]
        assert {m.writer for m in merged} == {"ask@other"}
        assert {m.turn_id for m in merged} == {"remote-turn"}
        assert log.merge(remote) == [], "a re-delivered event is ignored"
        assert log.merge([*remote, *remote]) == []
        texts = [e.event.parts[0].text for e in log.entries("c1") if isinstance(e, StoredEvent)]  # type: ignore[union-attr]
        assert texts == ["local", "from afar", "answer"]

    def test_load_live_starts_at_the_latest_boundary(self, store: Store) -> None:
        log = store.handle()
        old = log.append("c1", [user("q1"), model("a1"), user("q2"), model("a2")])
        assert [e.seq for e in log.load_live("c1").events] == [s.seq for s in old]
        (compaction,) = log.append(
            "c1",
            [CompactionEvent(summary="s", covers_up_to_seq=old[1].seq, kept_from_seq=old[2].seq)],
        )
        after = log.append("c1", [user("q3")])
        live = log.load_live("c1")
        assert live.boundary is not None and live.boundary.seq == compaction.seq
        assert [e.seq for e in live.events] == [old[2].seq, old[3].seq, after[0].seq]
        (cleared,) = log.append("c1", [ClearedEvent()])
        tail = log.append("c1", [user("fresh")])
        live = log.load_live("c1")
        assert live.boundary is not None and live.boundary.seq == cleared.seq
        assert [e.seq for e in live.events] == [tail[0].seq]
        assert log.load_live("other").boundary is None

    def test_entries_pages_by_seq_in_both_directions_and_by_kind(self, store: Store) -> None:
        log = store.handle()
        stored = log.append("c1", [user(f"m{i}") for i in range(7)])
        log.append("c2", [user("elsewhere")])
        (clear,) = log.append("c1", [ClearedEvent()])
        seqs = [s.seq for s in stored]
        assert [e.seq for e in log.entries("c1", limit=3)] == seqs[:3]
        assert [e.seq for e in log.entries("c1", after_seq=seqs[2], limit=3)] == seqs[3:6]
        assert [e.seq for e in log.entries("c1", before_seq=seqs[3], newest_first=True)] == [
            seqs[2],
            seqs[1],
            seqs[0],
        ]
        assert [e.seq for e in log.entries("c1", kinds=["cleared"])] == [clear.seq]
        assert len(log.entries(None)) == 9
        assert log.entries("c1", limit=0) == []

    def test_search_finds_words_newest_first(self, store: Store) -> None:
        log = store.handle()
        log.append("c1", [user("the pelican flies"), model("a heron"), user("pelican again")])
        hits = log.search("pelican")
        assert len(hits) == 2
        assert hits[0].seq > hits[1].seq
        assert "[[pelican]]" in hits[0].snippet.lower()
        assert hits[0].role == "user"
        assert log.search("pelican heron") == []
        assert log.search("") == []

    def test_data_version_changes_when_another_handle_appends(self, store: Store) -> None:
        reader = store.handle("app@a")
        writer = store.handle("ask@a")
        before = reader.data_version()
        assert reader.data_version() == before, "no write, no change"
        writer.append("c1", [user("news")])
        after = reader.data_version()
        assert after != before
        assert reader.data_version() == after

    def test_a_catch_up_reads_only_what_is_new(self, store: Store) -> None:
        log = store.handle()
        seen = log.append("c1", [user("q1"), model("a1")])[-1].seq
        new = store.handle().append("c1", [user("q2"), model("a2")])
        (compaction,) = store.handle().append(
            "c1", [CompactionEvent(summary="s", covers_up_to_seq=seen, kept_from_seq=new[0].seq)]
        )
        got = log.entries("c1", after_seq=seen)
        assert [e.seq for e in got] == [new[0].seq, new[1].seq, compaction.seq]

    def test_tool_call_pairs_keep_their_ids(self, store: Store) -> None:
        log = store.handle()
        call = FunctionCallPart(name="bash", args={"command": "ls"}, id="call-1")
        reply = FunctionResponsePart(name="bash", id="call-1", response={"output": "x"})
        stored = log.append(
            "c1",
            [
                MessageEvent(role="model", parts=[call]),
                MessageEvent(role="user", origin="tools", parts=[reply]),
            ],
            turn_id="t",
        )
        again = [e for e in log.entries("c1") if isinstance(e, StoredEvent)]
        assert [e.event for e in again] == [s.event for s in stored]

    def test_a_damaged_row_is_an_entry_of_its_own_where_a_store_can_hold_one(
        self, store: Store
    ) -> None:
        log = store.handle()
        if not isinstance(log, SqliteEventLog):
            pytest.skip("only a file can hold bytes that do not parse")
        before = log.append("c1", [user("before")])
        conn = sqlite3.connect(log.path)
        with conn:
            conn.execute(
                "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
                " VALUES ('c1', 'message', 1, '{not json', 0)"
            )
        conn.close()
        after = log.append("c1", [user("after")])
        got = log.entries("c1", after_seq=before[0].seq)
        assert [type(e).__name__ for e in got] == ["DamagedEvent", "StoredEvent"]
        assert got[1].seq == after[0].seq
        assert [e.seq for e in log.load_live("c1").events] == [before[0].seq, after[0].seq]


class TestSqliteEventLog(EventLogContract):
    def make_store(self, tmp_path: Path) -> Store:
        path = tmp_path / "data" / "koroku.db"
        return Store(lambda writer: SqliteEventLog(path, writer=writer))


class TestSyncedSqliteEventLog(EventLogContract):
    """A device whose every event is synced: every read goes through the hub order."""

    def make_store(self, tmp_path: Path) -> Store:
        path = tmp_path / "data" / "koroku.db"
        return Store(lambda writer: PushedAtOnceLog(path, writer=writer))


class TestInMemoryEventLog(EventLogContract):
    def make_store(self, tmp_path: Path) -> Store:
        shared = InMemoryEventLog()

        def same(writer: str) -> Log:
            shared.writer = writer
            return shared

        return Store(same)

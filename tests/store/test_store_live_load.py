"""load_live: the boundary and the tail the ContextView needs, read through the index."""

from __future__ import annotations

from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import ClearedEvent, CompactionEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from tests.support.builders import user


def texts(log: SqliteEventLog, conversation_id: str = "c1") -> list[str]:
    """What the model would see after a restart, as text."""
    live = log.load_live(conversation_id)
    view = ContextView.from_tail(live.boundary, live.events)
    return [p.text for m in view.contents() for p in m.parts if isinstance(p, TextPart)]


def seqs(log: SqliteEventLog, *words: str) -> list[int]:
    return [s.seq for s in log.append("c1", [user(w) for w in words])]


def test_no_boundary_loads_the_whole_conversation(log: SqliteEventLog) -> None:
    seqs(log, "a", "b")
    log.append("other", [user("elsewhere")])
    live = log.load_live("c1")
    assert live.boundary is None and live.damaged == []
    assert texts(log) == ["a", "b"]
    assert log.load_live("nobody").events == []


def test_after_compaction(log: SqliteEventLog) -> None:
    _, b, c = seqs(log, "a", "b", "c")
    log.append("c1", [CompactionEvent(summary="S1", covers_up_to_seq=b, kept_from_seq=c)])
    seqs(log, "d")
    live = log.load_live("c1")
    assert isinstance(live.boundary.event, CompactionEvent)  # type: ignore[union-attr]
    assert [e.seq for e in live.events] == [c, c + 2]
    assert texts(log)[1:] == ["c", "d"] and texts(log)[0].endswith("S1")


def test_after_cleared(log: SqliteEventLog) -> None:
    seqs(log, "a", "b")
    log.append("c1", [ClearedEvent()])
    seqs(log, "fresh")
    assert texts(log) == ["fresh"]
    assert isinstance(log.load_live("c1").boundary.event, ClearedEvent)  # type: ignore[union-attr]


def test_clear_after_compaction_wins(log: SqliteEventLog) -> None:
    a, b = seqs(log, "a", "b")
    log.append("c1", [CompactionEvent(summary="S", covers_up_to_seq=a, kept_from_seq=b)])
    log.append("c1", [ClearedEvent()])
    seqs(log, "x")
    assert texts(log) == ["x"]


def test_compaction_after_clear_wins(log: SqliteEventLog) -> None:
    seqs(log, "old")
    log.append("c1", [ClearedEvent()])
    a, b = seqs(log, "a", "b")
    log.append("c1", [CompactionEvent(summary="S", covers_up_to_seq=a, kept_from_seq=b)])
    seqs(log, "c")
    assert texts(log)[1:] == ["b", "c"]


def test_nested_compactions_skip_older_compaction_rows(log: SqliteEventLog) -> None:
    a, b, c = seqs(log, "a", "b", "c")
    (c1,) = log.append("c1", [CompactionEvent(summary="S1", covers_up_to_seq=a, kept_from_seq=b)])
    d, e = seqs(log, "d", "e")
    # The second summary keeps from b: the range holds the first compaction row.
    log.append("c1", [CompactionEvent(summary="S2", covers_up_to_seq=a, kept_from_seq=b)])
    live = log.load_live("c1")
    assert live.boundary is not None and live.boundary.seq == e + 1
    assert [x.seq for x in live.events] == [b, c, d, e]
    assert c1.seq not in [x.seq for x in live.events]
    contents = texts(log)
    assert contents[0].endswith("S2") and contents[1:] == ["b", "c", "d", "e"]


def test_other_conversations_do_not_leak(log: SqliteEventLog) -> None:
    a, b = seqs(log, "a", "b")
    log.append("c2", [user("c2 talk")])
    log.append("c1", [CompactionEvent(summary="S", covers_up_to_seq=a, kept_from_seq=b)])
    log.append("c2", [ClearedEvent()])
    assert texts(log)[1:] == ["b"]
    assert texts(log, "c2") == []


def test_live_load_reads_only_the_tail(log: SqliteEventLog) -> None:
    """The query plans: MAX(seq) on the index, the tail as a seq range (no full scan)."""
    conn = log._db.conn()
    plan_max = conn.execute(
        "EXPLAIN QUERY PLAN SELECT MAX(seq) FROM events WHERE conversation_id = ? AND kind = ?",
        ("c1", "compaction"),
    ).fetchall()
    assert "events_conversation_kind_seq" in str(plan_max)
    plan_tail = conn.execute(
        "EXPLAIN QUERY PLAN SELECT seq FROM events WHERE seq >= ? AND +conversation_id = ?"
        " ORDER BY seq",
        (1, "c1"),
    ).fetchall()
    assert "INTEGER PRIMARY KEY (rowid>?)" in str(plan_tail)

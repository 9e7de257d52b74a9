"""The derived coverage tables (store/log/coverage_index.py): the store loads exactly what the
rule of domain/coverage.py says, from the tables, on logs shaped by two devices syncing."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from koroku_desktop.domain.coverage import live_part
from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
)
from koroku_desktop.store import SqliteEventLog
from tests.agent.list_hub import ListHub
from tests.support.builders import said


def everything(log: SqliteEventLog) -> list[StoredEvent]:
    return [e for e in log.entries(limit=1_000_000) if isinstance(e, StoredEvent)]


def by_rule(log: SqliteEventLog) -> tuple[str, list[str]]:
    """The head's id and the live message ids, by the rule applied to every event."""
    live = live_part([e for e in everything(log) if e.conversation_id == "c"])
    return (live.boundary.event_id if live.boundary else ""), [m.event_id for m in live.messages]


def loaded(log: SqliteEventLog) -> tuple[str, list[str]]:
    """The same, as the store loads it."""
    live = log.load_live("c")
    messages = [e.event_id for e in live.events if isinstance(e.event, MessageEvent)]
    return (live.boundary.event_id if live.boundary else ""), messages


def compact(log: SqliteEventLog, rng: random.Random) -> None:
    """A compaction of a prefix of what is live here, extending the head (as Compactor)."""
    live = log.load_live("c")
    messages = [e for e in live.events if isinstance(e.event, MessageEvent)]
    if not messages:
        return
    cut = rng.randint(1, len(messages))
    head = live.boundary
    base = head.event_id if head and isinstance(head.event, CompactionEvent) else None
    log.append(
        "c",
        [
            CompactionEvent(
                summary=f"summary of {cut}",
                covers_up_to_seq=messages[cut - 1].seq,
                kept_from_seq=messages[cut].seq if cut < len(messages) else messages[-1].seq + 1,
                covered_ids=[m.event_id for m in messages[:cut]],
                base_id=base,
            )
        ],
    )


def turns_and_compactions(log: SqliteEventLog, turns: int, every: int, seed: int) -> None:
    """`turns` question-and-answer turns, with a compaction after every `every` of them."""
    rng = random.Random(seed)
    for n in range(turns):
        log.append("c", [said(f"q{n}"), said(f"a{n}", "model")])
        if n % every == every - 1:
            compact(log, rng)


@pytest.mark.parametrize("seed", range(6))
def test_two_devices_load_what_the_rule_says(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    hub = ListHub()
    with SqliteEventLog(tmp_path / "a.db") as a, SqliteEventLog(tmp_path / "b.db") as b:
        for step in range(120):
            device = rng.choice((a, b))
            roll = rng.random()
            if roll < 0.55:
                stored = device.append("c", [said(f"q{step}"), said(f"a{step}", "model")])
                if rng.random() < 0.05:
                    device.append(
                        "c",
                        [
                            RejectedEvent(
                                rejected_seq=stored[0].seq,
                                rejected_id=stored[0].event_id,
                                reason="test",
                            )
                        ],
                    )
            elif roll < 0.8:
                compact(device, rng)
            elif roll < 0.83:
                device.append("c", [ClearedEvent()])
            elif roll < 0.9:
                device.append("other", [said(f"elsewhere {step}")])
            else:
                hub.sync(device)
            for log in (a, b):
                assert loaded(log) == by_rule(log), f"step {step}"
        hub.both_ways(a, b)
        assert loaded(a) == by_rule(a) == loaded(b) == by_rule(b)
        # A fresh read-only open loads the same (the starts were written with the rows).
    with SqliteEventLog(tmp_path / "a.db", read_only=True) as again:
        assert loaded(again) == by_rule(again)


def test_each_compaction_row_fills_the_tables_and_a_damaged_one_covers_nothing(
    log: SqliteEventLog, db_path: Path
) -> None:
    first = log.append("c", [said("one"), said("two", "model"), said("three")])
    (compaction,) = log.append(
        "c",
        [
            CompactionEvent(
                summary="S",
                covers_up_to_seq=first[1].seq,
                kept_from_seq=first[2].seq,
                covered_ids=[first[0].event_id, first[1].event_id],
            )
        ],
    )
    with sqlite3.connect(db_path) as conn:
        assert sorted(conn.execute("SELECT message_id, compaction_id FROM coverage")) == sorted(
            [(first[0].event_id, compaction.event_id), (first[1].event_id, compaction.event_id)]
        )
        assert conn.execute("SELECT first_seq FROM live_starts").fetchall() == [(first[2].seq,)]
        # A row that is not JSON (a broken import) goes in; it covers nothing and is damaged.
        conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at,"
            " event_id, turn_id, writer) VALUES ('c', 'compaction', 1, '{not json', 1.0,"
            " 'broken', 'broken', 'raw')"
        )
        assert conn.execute("SELECT COUNT(*) FROM coverage").fetchone() == (2,)
    live = log.load_live("c")
    assert live.boundary == compaction
    assert [e.seq for e in live.events] == [first[2].seq]
    assert [d.kind for d in live.damaged] == ["compaction"]


def test_m008_fills_the_tables_for_a_log_written_before_it(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    with SqliteEventLog(path) as log:
        turns_and_compactions(log, turns=40, every=7, seed=7)
        expected = loaded(log)
    with sqlite3.connect(path) as conn:  # the file as the version before m008 left it
        conn.executescript(
            "DROP TRIGGER events_compaction_coverage; DROP TABLE coverage;"
            " DROP TABLE compaction_links; DROP TABLE live_starts;"
            " DELETE FROM schema_migrations WHERE name = 'm008_coverage';"
        )
    with SqliteEventLog(path) as log:
        assert log.migrations_run == ["m008_coverage"]  # m009 was applied on creation
        assert loaded(log) == expected == by_rule(log)
        with sqlite3.connect(path) as conn:
            (starts,) = conn.execute("SELECT COUNT(*) FROM live_starts").fetchone()
        assert starts == 5


def test_a_start_missing_is_found_again_when_loading(log: SqliteEventLog, db_path: Path) -> None:
    turns_and_compactions(log, turns=30, every=5, seed=3)
    expected = by_rule(log)
    with sqlite3.connect(db_path) as conn:
        conn.execute("DELETE FROM live_starts")
    assert loaded(log) == expected

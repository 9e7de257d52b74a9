"""Damaged rows: skipped with a warning, counted, shown as DamagedEvent, never fatal."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest

from koroku_desktop.domain.events import (
    CompactionEvent,
    DamagedEvent,
    StoredEvent,
    dump_event,
)
from koroku_desktop.store import SqliteEventLog
from tests.support.builders import user

RawInsert = Callable[..., int]


def plant_damage(raw_insert: RawInsert) -> list[int]:
    good = json.dumps(dump_event(user("fine")))
    return [
        raw_insert("{not json"),
        raw_insert(good, kind="telepathy"),
        raw_insert(good, schema_version=99),
        raw_insert(json.dumps({"kind": "message", "role": "alien", "parts": []})),
        raw_insert("[1, 2, 3]"),
    ]


def test_damaged_rows_are_skipped_and_counted(
    log: SqliteEventLog, raw_insert: RawInsert, caplog: pytest.LogCaptureFixture
) -> None:
    log.append("c1", [user("before")])
    bad = plant_damage(raw_insert)
    log.append("c1", [user("after")])
    with caplog.at_level(logging.WARNING):
        live = log.load_live("c1")
    assert [e.event.parts[0].text for e in live.events] == ["before", "after"]  # type: ignore[union-attr]
    assert [d.seq for d in live.damaged] == bad
    assert log.damaged_count == len(bad)
    assert sum("damaged" in r.message for r in caplog.records) == len(bad)
    log.load_live("c1")
    assert log.damaged_count == len(bad)  # the same rows are not counted twice


def test_damaged_rows_appear_in_entries(log: SqliteEventLog, raw_insert: RawInsert) -> None:
    bad = plant_damage(raw_insert)
    entries = log.entries()
    assert all(isinstance(e, DamagedEvent) for e in entries)
    assert [e.seq for e in entries] == bad
    first = entries[0]
    assert isinstance(first, DamagedEvent)
    assert first.raw == "{not json" and first.error
    kinds = {e.kind for e in log.entries("c1") if isinstance(e, DamagedEvent)}
    assert "telepathy" in kinds
    assert isinstance(log.get(bad[0]), DamagedEvent)


def test_damaged_latest_compaction_falls_back(log: SqliteEventLog, raw_insert: RawInsert) -> None:
    a, b = (s.seq for s in log.append("c1", [user("a"), user("b")]))
    log.append("c1", [CompactionEvent(summary="good", covers_up_to_seq=a, kept_from_seq=b)])
    broken = raw_insert("{oops", kind="compaction")
    log.append("c1", [user("c")])
    live = log.load_live("c1")
    assert isinstance(live.boundary, StoredEvent)
    assert isinstance(live.boundary.event, CompactionEvent)
    assert live.boundary.event.summary == "good"
    assert [d.seq for d in live.damaged] == [broken]
    assert [e.event.parts[0].text for e in live.events] == ["b", "c"]  # type: ignore[union-attr]

"""A task record (read without pydantic) carries exactly the fields of a `TaskEvent`, so the
fast read of `koroku tasks run-due` and the full one can never drift apart."""

from __future__ import annotations

from koroku_desktop.domain.events import TaskEvent, dump_event
from koroku_desktop.domain.task_records import EVENT_FIELDS, record_from_payload


def test_a_record_has_the_fields_of_the_event() -> None:
    assert set(EVENT_FIELDS) == set(TaskEvent.model_fields) - {"kind", "schema_version"}


def test_every_payload_the_event_writes_reads_back_as_a_record() -> None:
    event = TaskEvent(
        action="created",
        task_id="t",
        title="T",
        reminder=True,
        allowed_tools=["a", "b"],
        tool_budget=3,
        schedule_kind="cron",
        schedule_rule="0 8 * * *",
        schedule_tz="UTC",
        schedule_start="2026-12-07T08:00:00+00:00",
        late=False,
        at="2026-12-07T07:00:00+00:00",
    )
    record = record_from_payload(dump_event(event), "conv", 1.5, 7)
    assert record is not None
    assert record.allowed_tools == ("a", "b") and record.tool_budget == 3 and record.order == 7
    assert {f: getattr(record, f) for f in EVENT_FIELDS if f != "allowed_tools"} == {
        f: getattr(event, f) for f in EVENT_FIELDS if f != "allowed_tools"
    }

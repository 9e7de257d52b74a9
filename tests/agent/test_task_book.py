"""The task book over a real SQLite log, with an injected clock: tasks made, changed,
paused, resumed and removed as events; due runs (late, missed, paused); damaged events."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import koroku_desktop.agent.tasks as tasks_module
from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.domain.conversations import TASK_RUNS
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.events import TaskEvent
from koroku_desktop.domain.schedules import ScheduleError
from koroku_desktop.domain.task_words import every_to_rrule
from koroku_desktop.domain.tasks import Schedule, UnknownTask, due_key, fold_tasks
from koroku_desktop.store import SqliteEventLog
from tests.support.builders import task_written_as
from tests.support.clock import Clock

MONDAY = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)  # 07:00 in Berlin


@pytest.fixture
def log(tmp_path: Path) -> Iterator[SqliteEventLog]:
    with SqliteEventLog(tmp_path / "koroku.db") as opened:
        yield opened


def weekdays(at: datetime = MONDAY) -> Schedule:
    return Schedule("rrule", every_to_rrule("weekdays 08:00"), "Europe/Berlin", at)


def test_a_task_is_its_events_and_gets_its_own_conversation(log: SqliteEventLog) -> None:
    clock = Clock(MONDAY)
    talked_in = ConversationBook(log).create("Everyday talk")
    book = TaskBook(log, clock, device="laptop")
    task = book.create(weekdays(), prompt="Summarise my inbox", allowed_tools=["read_file"])
    assert task.title == "Summarise my inbox"
    assert task.next_due == datetime(2026, 12, 7, 7, 0, tzinfo=UTC)
    assert task.allowed_tools == ("read_file",) and task.device == "laptop"
    conversation = ConversationBook(log).get(task.conversation_id)
    assert conversation is not None and not conversation.archived  # listed, found
    assert conversation.title == "Task: Summarise my inbox"
    assert conversation.purpose == TASK_RUNS
    # Newer than the person's conversation, yet never the one a front end opens by default.
    current = ConversationBook(log).current()
    assert current is not None and current.id == talked_in.id

    clock.now += timedelta(hours=3)  # 10:00 Berlin: today's 08:00 passed, unrun
    book.pause(task.id[:6])
    assert book.get(task.id).next_due is None and book.due() == []
    resumed = book.resume("summarise my inbox")
    assert resumed.next_due == datetime(2026, 12, 8, 7, 0, tzinfo=UTC)  # passed times stay passed
    changed = book.change(task.id, title="Inbox", tool_budget=3)
    assert (changed.title, changed.tool_budget, changed.prompt) == (
        "Inbox",
        3,
        "Summarise my inbox",
    )
    book.remove("Inbox")
    assert book.list() == [] and [t.id for t in book.list(removed=True)] == [task.id]
    with pytest.raises(UnknownTask):
        book.get("Inbox")
    kinds = [e.event.action for e in log.entries(task.conversation_id, kinds=("task",))]  # type: ignore[union-attr]
    assert kinds == ["created", "paused", "resumed", "changed", "removed"]


def test_missed_times_make_one_late_run_and_a_run_moves_the_next_due(log: SqliteEventLog) -> None:
    clock = Clock(MONDAY)
    book = TaskBook(log, clock)
    task = book.create(weekdays(), prompt="hello", reminder=True)
    clock.now = datetime(2026, 12, 7, 7, 1, tzinfo=UTC)
    (run,) = book.due()
    assert (run.due, run.late, run.missed) == (task.next_due, False, False)
    clock.now = datetime(2026, 12, 10, 9, 0, tzinfo=UTC)  # asleep until Thursday 10:00
    (run,) = book.due()
    assert run.due == datetime(2026, 12, 10, 7, 0, tzinfo=UTC) and run.late and run.missed
    log.append(
        task.conversation_id,
        [TaskEvent(action="run_started", task_id=task.id, due=due_key(run.due), late=True)],
    )
    running = book.get(task.id)
    assert running.last_run is not None and running.last_run.outcome == "running"
    assert book.due() == [] and running.next_due == datetime(2026, 12, 11, 7, 0, tzinfo=UTC)
    log.append(
        task.conversation_id,
        [
            TaskEvent(
                action="run_finished", task_id=task.id, due=due_key(run.due), outcome="notified"
            )
        ],
    )
    finished = book.get(task.id).last_run
    assert finished is not None and (finished.outcome, finished.late) == ("notified", True)


def test_bad_input_is_refused_and_damaged_events_spoil_one_task_only(log: SqliteEventLog) -> None:
    clock = Clock(MONDAY)
    book = TaskBook(log, clock)
    with pytest.raises(ScheduleError, match="unknown time zone"):
        book.create(Schedule("cron", "0 8 * * *", "Nowhere/Else", MONDAY), prompt="x")
    with pytest.raises(RefusedError, match="no time left"):
        book.create(Schedule("once", "2026-12-01T08:00", "UTC", MONDAY), prompt="x")
    with pytest.raises(RefusedError, match="needs a prompt"):
        book.create(weekdays(), prompt="  ")
    good = book.create(weekdays(), prompt="fine")
    log.append(
        "elsewhere",
        [
            task_written_as("bad-rule", "Bad rule", "rrule", "FREQ=NEVER", "UTC", MONDAY),
            task_written_as("bad-zone", "Bad zone", "cron", "0 8 * * *", "Mars/Base", MONDAY),
            TaskEvent(action="run_started", task_id="never-made", due="nonsense"),
        ],
    )
    tasks = book.all()
    assert "bad RRULE" in tasks["bad-rule"].problem and tasks["bad-rule"].next_due is None
    assert "unknown time zone “Mars/Base”" in tasks["bad-zone"].problem
    assert "never-made" not in tasks
    clock.now = datetime(2026, 12, 7, 7, 0, tzinfo=UTC)
    assert [r.task.id for r in book.due()] == [good.id]


def test_only_the_owning_device_runs_a_task(log: SqliteEventLog) -> None:
    clock = Clock(MONDAY)
    mine = TaskBook(log, clock, device="laptop").create(weekdays(), prompt="mine")
    anyone = TaskBook(log, clock).create(weekdays(), prompt="anyone's")
    clock.now += timedelta(hours=2)
    assert {r.task.id for r in TaskBook(log, clock, device="desktop").due()} == {anyone.id}
    assert {r.task.id for r in TaskBook(log, clock, device="laptop").due()} == {mine.id, anyone.id}
    assert fold_tasks([]) == {}


def test_the_fast_read_of_the_file_folds_the_same_tasks(log: SqliteEventLog) -> None:
    from koroku_desktop.domain.task_records import record_from_payload
    from koroku_desktop.domain.tasks import due_runs, fold_records
    from koroku_desktop.store.log.task_rows import read_task_records

    clock = Clock(MONDAY)
    book = TaskBook(log, clock, device="laptop")
    made = book.create(weekdays(), prompt="one", allowed_tools=["read_file"])
    book.create(Schedule("cron", "0 9 * * *", "UTC", MONDAY), prompt="two", reminder=True)
    ran = book.create(weekdays(), prompt="three", title="Three")
    clock.now += timedelta(days=1, hours=2)  # Tuesday 09:00 in Berlin: two times passed
    (late,) = [d for d in book.due() if d.task.id == ran.id]
    assert late.missed
    key, at = due_key(late.due), clock.now.isoformat()
    log.append(
        ran.conversation_id,
        [
            TaskEvent(action="run_started", task_id=ran.id, due=key, late=True, at=at),
            TaskEvent(action="run_finished", task_id=ran.id, due=key, outcome="failed", at=at),
        ],
    )
    book.pause(made.id)
    records = read_task_records(log.path)
    assert records is not None
    assert fold_records(records) == book.all()
    clock.now += timedelta(days=1)
    assert due_runs(fold_records(records).values(), clock.now) == book.due() != []
    assert record_from_payload({"action": "created", "task_id": "x", "new": 1}, "c", 0.0, 1) is None
    assert (
        record_from_payload({"action": "created", "task_id": "x", "schema_version": 2}, "c", 0.0, 1)
        is None
    )
    assert (
        record_from_payload({"action": "created", "task_id": "x", "tool_budget": "3"}, "c", 0.0, 1)
        is None
    )


def test_reading_again_folds_again_only_when_the_log_has_new_task_events(
    log: SqliteEventLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    folds: list[int] = []

    def counting(events: list[object]) -> object:
        folds.append(len(events))
        return fold_tasks(events)  # type: ignore[arg-type]

    monkeypatch.setattr(tasks_module, "fold_tasks", counting)
    book = TaskBook(log, Clock(MONDAY))
    task = book.create(weekdays(), prompt="Summarise my inbox")
    assert [t.id for t in book.list()] == [task.id] and book.get(task.id) == task
    assert folds == [1]  # made, then listed and got: one fold
    with SqliteEventLog(log.path) as other:  # another process pauses it
        other.append(task.conversation_id, [TaskEvent(action="paused", task_id=task.id)])
    assert book.get(task.id).paused and book.list()[0].paused
    assert folds == [1, 2]

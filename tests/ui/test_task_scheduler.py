"""The scheduler's one timer on the Qt loop, over a real TaskBook on a real SQLite log, with an
injected clock: it sleeps until the soonest due time (no polling), runs what is due, and
never spins on a run it cannot advance."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.domain.events import TaskEvent
from koroku_desktop.domain.schedules import Schedule
from koroku_desktop.domain.tasks import DueRun, RunRecord, due_key
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.ui.task_scheduler import MAX_SLEEP_MS, MIN_WAKE_MS, TaskScheduler
from tests.support.clock import Clock

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


@pytest.fixture
def book(tmp_path: Path, clock: Clock) -> Iterator[TaskBook]:
    with SqliteEventLog(tmp_path / "koroku.db") as log:
        yield TaskBook(log, clock)


def once(at: datetime) -> Schedule:
    return Schedule("once", at.replace(tzinfo=None).isoformat(timespec="minutes"), "UTC", NOW)


def recording(book: TaskBook, clock: Clock, *, advance: bool = True) -> tuple[list[DueRun], object]:
    """A run function that records its runs (and, with `advance`, claims them in the log as
    the real runner does, so the task's next due time moves on)."""
    runs: list[DueRun] = []

    async def run(due: DueRun) -> RunRecord:
        runs.append(due)
        if not advance:
            return RunRecord(due.due, clock(), clock(), "skipped", None, due.late)
        event = TaskEvent(action="run_started", task_id=due.task.id, due=due_key(due.due))
        book.log.append(due.task.conversation_id, [event])
        done = TaskEvent(
            action="run_finished", task_id=due.task.id, due=due_key(due.due), outcome="notified"
        )
        book.log.append(due.task.conversation_id, [done])
        return RunRecord(due.due, clock(), clock(), "notified", None, due.late)

    return runs, run


def test_it_sleeps_until_the_soonest_due_time_and_not_at_all_when_nothing_is_due(
    qloop: qasync.QEventLoop, qtbot: QtBot, book: TaskBook, clock: Clock
) -> None:
    runs, run = recording(book, clock)
    scheduler = TaskScheduler(book.list, run, clock)  # type: ignore[arg-type]
    scheduler.rearm()
    qtbot.waitUntil(lambda: not scheduler._reading, timeout=5000)
    assert scheduler.interval_ms is None  # no task: no timer at all
    later = book.create(once(NOW + timedelta(hours=3)), prompt="later", reminder=True)
    book.create(once(NOW + timedelta(hours=2)), prompt="sooner", reminder=True)
    scheduler.rearm()
    qtbot.waitUntil(lambda: scheduler.interval_ms == 2 * 3600 * 1000, timeout=5000)
    far = book.create(once(NOW + timedelta(days=30)), prompt="far", reminder=True)
    book.pause(later.id)
    scheduler.arm_for([far])
    assert scheduler.interval_ms == MAX_SLEEP_MS  # capped: a net for a missed resume
    assert runs == []


def test_a_due_task_runs_once_and_the_timer_moves_to_the_next(
    qloop: qasync.QEventLoop, qtbot: QtBot, book: TaskBook, clock: Clock
) -> None:
    runs, run = recording(book, clock)
    ran: list[str] = []
    first = book.create(once(NOW + timedelta(minutes=1)), prompt="first", reminder=True)
    book.create(once(NOW + timedelta(minutes=5)), prompt="second", reminder=True)
    scheduler = TaskScheduler(book.list, run, clock)  # type: ignore[arg-type]
    scheduler.ran.connect(lambda task, _record: ran.append(task.id))
    clock.now = NOW + timedelta(minutes=1, seconds=5)
    scheduler.rearm()
    qtbot.waitUntil(lambda: ran == [first.id], timeout=5000)
    qtbot.waitUntil(lambda: scheduler.interval_ms == (4 * 60 - 5) * 1000, timeout=5000)
    assert [r.task.id for r in runs] == [first.id] and scheduler.wakes == 1


def test_a_run_that_does_not_advance_is_tried_again_after_a_minute_not_at_once(
    qloop: qasync.QEventLoop, qtbot: QtBot, book: TaskBook, clock: Clock
) -> None:
    runs, run = recording(book, clock, advance=False)  # another process holds it
    book.create(once(NOW + timedelta(minutes=1)), prompt="held", reminder=True)
    scheduler = TaskScheduler(book.list, run, clock)  # type: ignore[arg-type]
    clock.now = NOW + timedelta(minutes=2)
    scheduler.rearm()
    qtbot.waitUntil(lambda: len(runs) == 1, timeout=5000)
    qtbot.waitUntil(lambda: scheduler.interval_ms == MIN_WAKE_MS, timeout=5000)
    assert len(runs) == 1 and scheduler.wakes == 1


def test_once_the_held_run_moves_on_elsewhere_the_next_task_is_not_held_back_a_minute(
    qloop: qasync.QEventLoop, qtbot: QtBot, book: TaskBook, clock: Clock
) -> None:
    runs, run = recording(book, clock, advance=False)  # another process holds it
    held = book.create(once(NOW + timedelta(minutes=1)), prompt="held", reminder=True)
    book.create(once(NOW + timedelta(minutes=3)), prompt="next", reminder=True)
    scheduler = TaskScheduler(book.list, run, clock)  # type: ignore[arg-type]
    clock.now = NOW + timedelta(minutes=2, seconds=30)
    scheduler.rearm()
    qtbot.waitUntil(lambda: len(runs) == 1, timeout=5000)
    qtbot.waitUntil(lambda: scheduler.interval_ms == MIN_WAKE_MS, timeout=5000)
    due = due_key(runs[0].due)  # the other process finishes it (its log change re-arms)
    book.log.append(
        held.conversation_id, [TaskEvent(action="run_started", task_id=held.id, due=due)]
    )
    finished = TaskEvent(action="run_finished", task_id=held.id, due=due, outcome="notified")
    book.log.append(held.conversation_id, [finished])
    scheduler.rearm()
    qtbot.waitUntil(lambda: scheduler.interval_ms == 30_000, timeout=5000)
    assert len(runs) == 1

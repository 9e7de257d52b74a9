"""Task runs over a real SQLite log and turn lease, with `FakeChatModel` and an injected
clock: a reminder notifies without a model call; a prompt's turn runs in the task's
conversation with only its granted tools; a call to any other tool is refused headless
(`needs_approval`, notified); a failed model call records `failed` and the task runs at its
next time; two runners racing for one due time run it once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from koroku_desktop.agent.options import AgentOptions
from koroku_desktop.agent.task_runs import HeadlessApprover, TaskRunner
from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.app.agent_pool import AgentKit
from koroku_desktop.app.task_wiring import task_agents
from koroku_desktop.domain.events import MessageEvent, StoredEvent, TaskEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest
from koroku_desktop.domain.parts import visible_text
from koroku_desktop.domain.tasks import DueRun, Schedule
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.registry import ToolRegistry
from tests.fakes.chat_model import FakeChatModel, call
from tests.support.clock import Clock
from tests.support.dbus import FakeNotifications

NOW = datetime(2026, 12, 7, 7, 0, tzinfo=UTC)  # Monday 08:00 in Berlin


@dataclass
class RecordingNotifier:
    shown: list[tuple[str, str, str]] = field(default_factory=list)

    def notify(
        self, title: str, body: str, *, actions: Sequence[tuple[str, str]] = (), tag: str = ""
    ) -> None:
        self.shown.append((title, body, tag))


@dataclass
class World:
    tmp: Path
    log: SqliteEventLog
    clock: Clock
    notifier: RecordingNotifier
    locks: list[SqliteTurnLock] = field(default_factory=list)

    def runner(self, model: FakeChatModel) -> TaskRunner:
        lock = SqliteTurnLock(self.tmp / "koroku.db", "tasks")
        self.locks.append(lock)
        options = AgentOptions(
            model="gemini-test",
            max_tool_calls=25,
            workspace=self.tmp,
            data_dir=self.tmp,
            surface_memories=False,
            remember_facts=False,
        )
        tools = ToolRegistry(self.tmp / "tools")
        kit = AgentKit(self.log, model, tools, ApprovalPolicy(), HeadlessApprover(), options, lock)
        make = task_agents(kit, lock, self.clock)
        return TaskRunner(self.log, make, self.notifier, self.clock, turn_lock=lock)

    def book(self) -> TaskBook:
        return TaskBook(self.log, self.clock)

    def task_events(self, task_id: str) -> list[TaskEvent]:
        found = []
        for entry in self.log.entries(None, kinds=("task",)):
            event = entry.event if isinstance(entry, StoredEvent) else None
            if isinstance(event, TaskEvent) and event.task_id == task_id:
                found.append(event)
        return found


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with SqliteEventLog(tmp_path / "koroku.db") as log:
        made = World(tmp_path, log, Clock(NOW - timedelta(hours=1)), RecordingNotifier())
        yield made
        for lock in made.locks:
            lock.close()


def daily(at: datetime = NOW - timedelta(days=1)) -> Schedule:
    return Schedule("rrule", "FREQ=DAILY;BYHOUR=8;BYMINUTE=0;BYSECOND=0", "Europe/Berlin", at)


def never_called(request: ModelRequest) -> str:
    raise AssertionError("a reminder called the model")


def the_due(world: World) -> DueRun:
    (due,) = world.book().due()
    return due


async def test_a_reminder_notifies_and_makes_no_model_call(world: World) -> None:
    task = world.book().create(daily(), prompt="Call the garage", title="Garage", reminder=True)
    world.clock.now = NOW + timedelta(seconds=20)
    record = await world.runner(FakeChatModel(never_called)).run(the_due(world))
    assert (record.outcome, record.due, record.late) == ("notified", NOW, False)
    assert world.notifier.shown == [("Reminder: Garage", "Call the garage", task.id)]
    assert [e.action for e in world.task_events(task.id)] == [
        "created",
        "run_started",
        "run_finished",
    ]
    after = world.book().get(task.id)
    assert after.last_run is not None and after.last_run.outcome == "notified"
    assert after.next_due == NOW + timedelta(days=1)
    assert world.book().due() == []


async def test_a_prompt_runs_in_its_conversation_with_its_granted_tools(world: World) -> None:
    (world.tmp / "notes.txt").write_text("milk, eggs", encoding="utf-8")
    task = world.book().create(daily(), prompt="Read notes.txt", allowed_tools=["read_file"])
    model = FakeChatModel.scripted(
        [call("read_file", path=str(world.tmp / "notes.txt"))], "You need milk and eggs.\nBye."
    )
    world.clock.now = NOW + timedelta(minutes=30)  # woke late
    record = await world.runner(model).run(the_due(world))
    assert (record.outcome, record.late) == ("ok", True)
    assert record.turn_id and record.detail == "You need milk and eggs.\nBye."
    assert world.notifier.shown == [
        (f"{task.title} (late)", "You need milk and eggs.\nBye.", task.id)
    ]
    messages = [
        e.event
        for e in world.log.entries(task.conversation_id)
        if isinstance(e, StoredEvent) and isinstance(e.event, MessageEvent)
    ]
    assert "milk, eggs" in str(messages[2].function_responses[0].response)
    assert visible_text(messages[-1].parts).startswith("You need milk")
    finished = world.task_events(task.id)[-1]
    assert finished.action == "run_finished" and finished.run_turn_id == record.turn_id


async def test_a_tool_not_granted_waits_as_needs_approval_and_notifies(world: World) -> None:
    task = world.book().create(daily(), prompt="Clean up", title="Cleanup", tool_budget=2)
    marker = world.tmp / "ran"
    model = FakeChatModel.scripted(
        [call("bash", command=f"touch {marker}")], "I could not run bash."
    )
    world.clock.now = NOW
    record = await world.runner(model).run(the_due(world))
    assert record.outcome == "needs_approval" and "bash" in record.detail
    assert not marker.exists()
    (title, body, tag) = world.notifier.shown[0]
    assert title == "Task needs your approval: Cleanup" and "bash" in body and tag == task.id
    answered = model.requests[1].contents[-1].function_responses[0].response
    assert "may not use bash unattended" in str(answered)


async def test_a_failed_model_call_records_failed_and_runs_next_time(world: World) -> None:
    task = world.book().create(daily(), prompt="Summarise")
    failing = FakeChatModel.scripted(ModelError("unavailable", "Gemini is unavailable (503)"))
    world.clock.now = NOW
    record = await world.runner(failing).run(the_due(world))
    assert record.outcome == "failed" and "503" in record.detail
    assert world.notifier.shown[0][0] == f"Task failed: {task.title}"
    assert world.book().due() == []
    world.clock.now = NOW + timedelta(days=1)
    later = await world.runner(FakeChatModel.scripted("done")).run(the_due(world))
    assert later.outcome == "ok" and later.due == NOW + timedelta(days=1)


async def test_two_runners_racing_for_one_due_time_run_it_once(world: World) -> None:
    task = world.book().create(daily(), prompt="Once only")
    world.clock.now = NOW
    due = the_due(world)
    first, second = (
        world.runner(FakeChatModel.scripted("one")),
        world.runner(FakeChatModel.scripted("two")),
    )
    records = await asyncio.gather(first.run(due), second.run(due))
    assert sorted(r.outcome for r in records) == ["ok", "skipped"]
    actions = [e.action for e in world.task_events(task.id)]
    assert actions.count("run_started") == 1 and actions.count("run_finished") == 1
    world.book().pause(task.id)
    world.clock.now = NOW + timedelta(days=1)
    paused = await first.run(DueRun(world.book().get(task.id), world.clock.now, late=False))
    assert paused.outcome == "skipped"


async def test_a_due_time_the_log_moved_past_before_the_claim_is_skipped(world: World) -> None:
    """What run-due peeked can be stale by its claim (another process, `koroku tasks ...`
    from a terminal): the claim folds the log again and runs only what is still due."""
    runner = world.runner(FakeChatModel(never_called))
    rescheduled = world.book().create(daily(), prompt="Rescheduled", reminder=True)
    resumed = world.book().create(daily(), prompt="Resumed", reminder=True)
    world.clock.now = NOW + timedelta(seconds=20)
    peeked = {d.task.id: d for d in world.book().due()}
    world.book().change(rescheduled.id, schedule=daily(NOW))  # counts from now on
    world.book().pause(resumed.id)
    world.book().resume(resumed.id)  # times passed while paused are not run
    for task in (rescheduled, resumed):
        assert (await runner.run(peeked[task.id])).outcome == "skipped"
        assert "run_started" not in [e.action for e in world.task_events(task.id)]
    asked = DueRun(world.book().get(resumed.id), world.clock.now, late=False)
    assert (await runner.run(asked)).outcome == "notified"  # Run now: whatever the schedule


async def test_an_earlier_due_time_is_skipped_once_a_later_one_ran(world: World) -> None:
    task = world.book().create(daily(), prompt="Daily", reminder=True)
    world.clock.now = NOW + timedelta(seconds=20)
    stale = the_due(world)  # a run-due that peeked, then waited a day for its turn
    world.clock.now = NOW + timedelta(days=1, seconds=20)
    runner = world.runner(FakeChatModel(never_called))
    assert (await runner.run(the_due(world))).outcome == "notified"
    assert (await runner.run(stale)).outcome == "skipped"
    assert [e.action for e in world.task_events(task.id)].count("run_started") == 1


async def test_a_headless_runs_notifications_offer_no_buttons_nobody_hears(
    world: World, fake_notifications: FakeNotifications
) -> None:
    """`run-due` has no one to act on Open or Snooze (it exits after its runs): its
    notifier offers none; the app's offers both (tests/ui/test_task_runs_ui.py)."""
    from koroku_desktop.app.notifications import make_notifier

    world.book().create(daily(), prompt="Call the garage", reminder=True)
    world.clock.now = NOW + timedelta(seconds=20)
    runner = world.runner(FakeChatModel(never_called))
    runner.notifier = notifier = make_notifier()
    try:
        assert (await runner.run(the_due(world))).outcome == "notified"
    finally:
        close = getattr(notifier, "close", None)
        if close is not None:
            close()
    (shown,) = fake_notifications.calls()
    assert shown["summary"] == "Reminder: Call the garage" and shown["actions"] == []

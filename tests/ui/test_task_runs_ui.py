"""Due tasks in the running app, end to end: the scheduler runs them on the Qt loop through the
core's TaskRunner, the notification goes to a fake notification service on a private session
bus, its Open and Snooze act in the app, the tray marks the unread result, and a run's call
the task was not granted waits as the normal approval card in the task's conversation."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest
import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent, StoredEvent, TaskEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import FunctionResponsePart, visible_text
from koroku_desktop.domain.schedules import Schedule
from koroku_desktop.domain.tasks import Task, due_key
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.ui.app import Desktop
from tests.fakes.chat_model import FakeChatModel, FakeReply, call
from tests.fakes.gemini_server import FakeGemini
from tests.support.clock import Clock
from tests.support.dbus import FakeNotifications
from tests.ui.conftest import running_desktop

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


@contextmanager
def start(qtbot: QtBot, model: FakeChatModel, clock: Clock) -> Iterator[Desktop]:
    with running_desktop(qtbot, model) as desk:
        if desk.welcome is not None:
            desk.welcome.ok_button.click()
        desk.runtime.agent.clock = clock
        yield desk


@pytest.fixture
def desk(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    fake_notifications: FakeNotifications,
    clock: Clock,
) -> Iterator[Desktop]:
    with start(qtbot, FakeChatModel(lambda _r: "Three things are due.\nMore below."), clock) as d:
        yield d


def reminder_due(desk: Desktop, clock: Clock, qtbot: QtBot) -> Task:
    """A reminder at 12:01, the clock moved past it, the scheduler told: it has run."""
    task = desk.tasks.book.create(
        Schedule("once", "2026-12-03T12:01", "UTC", NOW), prompt="Call the garage", reminder=True
    )
    clock.now = NOW + timedelta(minutes=1, seconds=10)
    desk.tasks.scheduler.rearm()
    qtbot.waitUntil(lambda: finished(desk, task.id) != "", timeout=15000)
    return desk.tasks.book.get(task.id)


def finished(desk: Desktop, task_id: str) -> str:
    """The task's last run's outcome once it has finished ("" before)."""
    run = desk.tasks.book.get(task_id).last_run
    return run.outcome if run is not None and run.finished_at is not None else ""


def test_a_due_reminder_notifies_and_open_shows_its_conversation(
    desk: Desktop, clock: Clock, qtbot: QtBot, fake_notifications: FakeNotifications
) -> None:
    task = reminder_due(desk, clock, qtbot)
    assert task.last_run is not None and task.last_run.outcome == "notified"
    qtbot.waitUntil(lambda: len(fake_notifications.calls()) == 1, timeout=10000)
    (shown,) = fake_notifications.calls()
    assert shown["summary"] == "Reminder: Call the garage" and shown["body"] == ""
    assert shown["actions"] == ["default", "Open", "open", "Open", "snooze", "Snooze"]
    qtbot.waitUntil(lambda: desk.notices.unread == {task.conversation_id}, timeout=5000)
    assert desk.tray is not None and desk.tray.state == "unread"
    fake_notifications.act("Invoke", shown["id"], "default")  # a click on the notification: Open
    qtbot.waitUntil(
        lambda: desk.runtime.agent.conversation_id == task.conversation_id, timeout=15000
    )
    qtbot.waitUntil(lambda: not desk.notices.unread, timeout=5000)
    assert desk.tray.state == "idle"


def test_snooze_makes_a_reminder_ten_minutes_later_that_survives_a_restart(
    desk: Desktop, clock: Clock, qtbot: QtBot, fake_notifications: FakeNotifications
) -> None:
    task = reminder_due(desk, clock, qtbot)
    qtbot.waitUntil(lambda: len(fake_notifications.calls()) == 1, timeout=10000)
    fake_notifications.act("Invoke", fake_notifications.calls()[0]["id"], "snooze")
    qtbot.waitUntil(lambda: len(desk.tasks.book.list()) == 2, timeout=15000)
    (snoozed,) = [t for t in desk.tasks.book.list() if t.id != task.id]
    assert snoozed.title == "Call the garage (snoozed)" and snoozed.reminder
    assert snoozed.conversation_id == task.conversation_id
    assert snoozed.next_due == datetime(2026, 12, 3, 12, 11, tzinfo=UTC)
    qtbot.waitUntil(lambda: desk.tasks.scheduler.next_wake == snoozed.next_due, timeout=5000)


def test_a_run_that_needs_approval_waits_for_the_card_in_its_conversation(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    fake_notifications: FakeNotifications,
    clock: Clock,
) -> None:
    model = FakeChatModel.scripted(
        [call("bash", "b1", command="echo inbox")], then="The inbox has three items."
    )
    with start(qtbot, model, clock) as desk:
        task = desk.tasks.book.create(
            Schedule("once", "2026-12-03T12:01", "UTC", NOW),
            prompt="Summarise the inbox",
            allowed_tools=["read_file"],
        )
        clock.now = NOW + timedelta(minutes=2)
        desk.tasks.scheduler.rearm()
        qtbot.waitUntil(lambda: len(fake_notifications.calls()) == 1, timeout=15000)
        waiting = fake_notifications.calls()[0]
        assert waiting["summary"] == "Summarise the inbox: waiting for your approval"
        assert "bash" in waiting["body"]
        assert not desk.window.approvals.cards()  # not in the conversation on screen
        fake_notifications.act("Invoke", waiting["id"], "open")
        qtbot.waitUntil(lambda: bool(desk.window.approvals.cards()), timeout=15000)
        assert desk.runtime.agent.conversation_id == task.conversation_id
        desk.window.approvals.cards()[0].allow_once.click()
        qtbot.waitUntil(lambda: finished(desk, task.id) == "ok", timeout=15000)
        replies = [
            visible_text(e.event.parts)
            for e in desk.runtime.log.entries(task.conversation_id)
            if isinstance(e, StoredEvent)
            and isinstance(e.event, MessageEvent)
            and e.event.role == "model"
        ]
        assert replies[-1] == "The inbox has three items."
        qtbot.waitUntil(lambda: len(fake_notifications.calls()) == 2, timeout=10000)
        assert fake_notifications.calls()[1]["body"] == "The inbox has three items."


def test_a_run_asks_approval_as_itself_when_a_run_now_of_another_task_began_meanwhile(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    fake_notifications: FakeNotifications,
    clock: Clock,
) -> None:
    inbox_asks, wrapped = asyncio.Event(), asyncio.Event()

    async def after(gate: asyncio.Event, answer: FakeReply) -> FakeReply:
        await gate.wait()
        return answer

    def reply(request: ModelRequest) -> object:
        said = " ".join(visible_text(c.parts) for c in request.contents if c.role == "user")
        if "Wrap the presents" in said:
            return after(wrapped, "Wrapped.")  # the Run now: thinking until the end
        if isinstance(request.contents[-1].parts[-1], FunctionResponsePart):
            return "The inbox has three items."
        return after(inbox_asks, [call("bash", "b1", command="echo inbox")])

    model = FakeChatModel(reply)  # type: ignore[arg-type]
    with start(qtbot, model, clock) as desk:
        inbox = desk.tasks.book.create(
            Schedule("once", "2026-12-03T12:01", "UTC", NOW),
            prompt="Summarise the inbox",
            allowed_tools=["read_file"],
        )
        wrap = desk.tasks.book.create(
            Schedule("once", "2026-12-24T09:00", "UTC", NOW), prompt="Wrap the presents"
        )
        clock.now = NOW + timedelta(minutes=2)
        desk.tasks.scheduler.rearm()  # the inbox's run starts, its model thinking
        qtbot.waitUntil(lambda: len(model.requests) == 1, timeout=15000)
        running = asyncio.ensure_future(desk.tasks.run_now(wrap))  # then a Run now
        qtbot.waitUntil(lambda: len(model.requests) == 2, timeout=15000)
        inbox_asks.set()  # the inbox's run now wants a tool it was not granted
        qtbot.waitUntil(lambda: len(fake_notifications.calls()) == 1, timeout=15000)
        waiting = fake_notifications.calls()[0]
        assert waiting["summary"] == "Summarise the inbox: waiting for your approval"
        fake_notifications.act("Invoke", waiting["id"], "open")
        qtbot.waitUntil(lambda: bool(desk.window.approvals.cards()), timeout=15000)
        assert desk.runtime.agent.conversation_id == inbox.conversation_id
        desk.window.approvals.cards()[0].allow_once.click()
        qtbot.waitUntil(lambda: finished(desk, inbox.id) == "ok", timeout=15000)
        wrapped.set()
        qtbot.waitUntil(running.done, timeout=15000)
        assert finished(desk, wrap.id) == "ok"


def test_run_now_from_the_tasks_page(desk: Desktop, clock: Clock, qtbot: QtBot) -> None:
    task = desk.tasks.book.create(
        Schedule("once", "2026-12-24T09:00", "UTC", NOW), prompt="Wrap the presents"
    )
    panel = desk.show_settings().tasks
    assert panel is not None
    qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 1, timeout=10000)
    panel.table.topLevelItem(0).setSelected(True)
    panel.run_button.click()
    qtbot.waitUntil(lambda: panel.table.topLevelItem(0).text(3).startswith("ok"), timeout=15000)
    after = desk.tasks.book.get(task.id)
    assert after.next_due == datetime(2026, 12, 24, 9, 0, tzinfo=UTC)  # schedule unchanged


def test_a_run_another_process_finished_marks_the_tray_unread(
    desk: Desktop, clock: Clock, qtbot: QtBot
) -> None:
    task = desk.tasks.book.create(
        Schedule("once", "2026-12-03T12:01", "UTC", NOW), prompt="Call the garage", reminder=True
    )
    qtbot.waitUntil(lambda: desk.tasks.scheduler.next_wake is not None, timeout=10000)
    assert not desk.notices.unread
    due = due_key(datetime(2026, 12, 3, 12, 1, tzinfo=UTC))
    with SqliteEventLog(desk.runtime.paths.db) as other:  # a `koroku tasks run-due`'s writes
        other.append(
            task.conversation_id,
            [
                TaskEvent(action="run_started", task_id=task.id, due=due),
                TaskEvent(action="run_finished", task_id=task.id, due=due, outcome="notified"),
            ],
        )
    qtbot.waitUntil(lambda: desk.notices.unread == {task.conversation_id}, timeout=10000)

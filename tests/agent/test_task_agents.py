"""Quick ask's agent and a task run's are built by the runtime's kit like every
conversation's: their tools act for their own turn, not for the agent the runtime opened
with, and a writer wired into the kit later (scheduling) reaches them too."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.app.quick_ask_agent import quick_ask_agent
from koroku_desktop.app.schedule_wiring import schedule_writer
from koroku_desktop.app.task_wiring import task_runs
from koroku_desktop.domain.events import FactEvent, StoredEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.tasks import DueRun, Schedule
from tests.agent.conftest import OpenRuntime, YesApprover
from tests.fakes.chat_model import FakeChatModel, call

NOW = datetime(2026, 12, 7, 7, 0, tzinfo=UTC)


class Silent:
    def notify(self, title: str, body: str, *, actions: object = (), tag: str = "") -> None:
        pass


def reply(request: ModelRequest) -> object:
    if request.contents[-1].function_responses:
        return "Noted."
    return [call("remember", subject="editor", fact="Uses Helix.", category="preference")]


def test_a_task_runs_remember_stores_the_fact_in_the_tasks_own_turn(
    open_runtime: OpenRuntime,
) -> None:
    runtime = open_runtime(FakeChatModel(reply))
    clock = lambda: NOW  # noqa: E731
    book = TaskBook(runtime.log, clock)
    task = book.create(
        Schedule("once", "2026-12-07T09:00", "UTC", NOW - timedelta(hours=1)),
        prompt="Remember which editor I use",
        allowed_tools=["remember"],
    )
    runs = task_runs(runtime, Silent(), clock)
    try:
        record = asyncio.run(runs.runner.run(DueRun(task, NOW, late=False)))
    finally:
        runs.close()
    assert record.outcome == "ok", record
    facts = [
        e
        for e in runtime.log.entries(None, kinds=("fact",))
        if isinstance(e, StoredEvent) and isinstance(e.event, FactEvent)
    ]
    assert [(f.conversation_id, f.event.text) for f in facts] == [
        (task.conversation_id, "Uses Helix.")
    ]
    assert task.conversation_id != runtime.agent.conversation_id


def test_quick_asks_agent_schedules_through_the_writer_the_app_wired(
    open_runtime: OpenRuntime,
) -> None:
    def schedules(request: ModelRequest) -> object:
        if request.contents[-1].function_responses:
            return "Scheduled."
        return [
            call(
                "schedule",
                title="Call the garage",
                prompt="Call the garage",
                reminder=True,
                kind="once",
                rule="2026-12-08T09:00",
                time_zone="UTC",
            )
        ]

    runtime = open_runtime(FakeChatModel(schedules))
    book = TaskBook(runtime.log, lambda: NOW)
    runtime.kit.schedule = schedule_writer(book)  # as the app's task center does
    runtime.tools.switched_off.discard("schedule")
    conversations = runtime.conversations
    assert conversations is not None
    quick = quick_ask_agent(runtime, YesApprover(), conversations.quick_asks())

    async def ask() -> None:
        try:
            await quick.agent.run_turn("remind me to call the garage tomorrow at nine")
        finally:
            await quick.close()

    asyncio.run(ask())
    assert [t.title for t in book.list()] == ["Call the garage"]

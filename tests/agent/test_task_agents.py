"""A task run's agent is built by the runtime's kit like every conversation's: its tools
act for the task's own turn, not for the agent the runtime opened with."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.app.task_wiring import task_runs
from koroku_desktop.domain.events import FactEvent, StoredEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.tasks import DueRun, Schedule
from tests.agent.conftest import OpenRuntime
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

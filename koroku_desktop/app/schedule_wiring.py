"""Wiring scheduled tasks for the desktop: the user's time zone, the `schedule` tool's writer
over the TaskBook, and the snooze a notification's action asks for."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.app.task_wiring import local_zone
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.json_value import JsonObject
from koroku_desktop.domain.schedules import Schedule, zone
from koroku_desktop.domain.task_words import describe
from koroku_desktop.domain.tasks import Task
from koroku_desktop.tools.base import ScheduleTask, tool_error
from koroku_desktop.tools.schedule import ScheduleRequest, build_schedule

SNOOZE = timedelta(minutes=10)


def schedule_writer(book: TaskBook) -> ScheduleTask:
    """The `schedule` tool's writer: the request's schedule in the user's zone (unless it
    names one), made through `book` (off the loop); what was made, or why not, for the model."""

    async def write(request: object) -> JsonObject:
        assert isinstance(request, ScheduleRequest)
        tz = request.time_zone or local_zone()
        now = book.clock()
        try:
            schedule = build_schedule(request, tz, now)
            task = await asyncio.to_thread(
                book.create,
                schedule,
                prompt=request.prompt or request.title,
                title=request.title or None,
                reminder=request.reminder,
                allowed_tools=request.allowed_tools,
                tool_budget=request.tool_budget,
            )
        except (RefusedError, ValueError) as exc:
            return tool_error(f"not scheduled: {exc}")
        return {
            "scheduled": task.title,
            "id": task.short_id,
            "when": describe(task.schedule, now),
            "conversation": "its own, in the sidebar (also opened from the task's notification)",
        }

    return write


def give_schedule(runtime: Runtime, writer: ScheduleTask) -> None:
    """Every agent can schedule through `writer`: each the runtime's kit builds from now on
    (quick ask's own included) and those the pool holds now (not only the one shown)."""
    runtime.kit.schedule = writer
    pool = runtime.pool
    for agent in pool.agents() if pool is not None else [runtime.agent]:
        agent.calls.schedule = writer


def snooze(book: TaskBook, task: Task, now: datetime) -> Task:
    """Remind again of `task` in ten minutes: a one-off reminder in its conversation (an
    event like any task, so it survives a restart). Blocking."""
    tz = task.schedule.tz
    at = (now + SNOOZE).astimezone(zone(tz)).replace(second=0, microsecond=0, tzinfo=None)
    schedule = Schedule("once", at.isoformat(timespec="minutes"), tz, now)
    return book.create(
        schedule,
        prompt=task.title if not task.reminder else task.prompt,
        title=f"{task.title.removesuffix(' (snoozed)')} (snoozed)",
        reminder=True,
        conversation_id=task.conversation_id,
    )

"""The scheduled tasks of one log: read them (domain/tasks.py folds them), make and change
them by appending `task` events.

Each task's events go in its conversation (its own by default, made through
`ConversationBook` with the `task` purpose: listed in the sidebar like any other, but never
the one a front end opens by default). Nothing takes a lease here: a change is one event
any later fold sees; runs (agent/task_runs.py) take the conversation's turn lease.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.agent.kind_events import KindFollower, kind_events
from koroku_desktop.agent.ports import ConversationLog, LogReader
from koroku_desktop.domain.conversations import TASK_RUNS
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.events import StoredEvent, TaskAction, TaskEvent
from koroku_desktop.domain.tasks import (
    DueRun,
    Schedule,
    Task,
    check,
    due_runs,
    fold_tasks,
    next_due,
    resolve_task,
    schedule_fields,
)

DEFAULT_BUDGET = 10
"""The tool calls one unattended run may make, unless the task says otherwise."""
TITLE_LIMIT = 120


def task_events(log: LogReader, after_seq: int = 0) -> list[StoredEvent]:
    """The `task` events after `after_seq`, in seq order, page by page. Blocking."""
    return kind_events(log, "task", after_seq)


def _title(text: str) -> str:
    title = " ".join(text.split())
    if not title:
        raise RefusedError("a task needs a title or a prompt")
    return title if len(title) <= TITLE_LIMIT else title[: TITLE_LIMIT - 1].rstrip() + "…"


class TaskBook:
    """The tasks of one log. Blocking (run it off the event loop); thread-safe. `clock` is
    the one source of "now"; `device` names this machine (the owner of tasks made here)."""

    def __init__(
        self, log: ConversationLog, clock: Callable[[], datetime], *, device: str = ""
    ) -> None:
        self.log = log
        self.clock = clock
        self.device = device
        self._follower = KindFollower(log, "task")
        self._folded: tuple[tuple[int, int], dict[str, Task]] | None = None
        """The last fold and the events it folded (how many, the last seq)."""

    def _read(self) -> list[StoredEvent]:
        return self._follower.read()

    def all(self) -> dict[str, Task]:
        """Every task, removed ones included, by id, as the log stands now (folded again
        only when the follower brought new events: the app re-reads on every log change)."""
        events = self._read()
        key = (len(events), events[-1].seq if events else 0)
        folded = self._folded
        if folded is None or folded[0] != key:
            folded = self._folded = (key, fold_tasks(events))
        return dict(folded[1])

    def list(self, *, removed: bool = False) -> list[Task]:
        """The tasks (removed ones only if asked), soonest next run first, then by title."""
        far = datetime.max.replace(tzinfo=self.clock().tzinfo)
        tasks = [t for t in self.all().values() if removed or not t.removed]
        return sorted(tasks, key=lambda t: (t.removed, t.next_due or far, t.title, t.id))

    def get(self, ref: str) -> Task:
        """The task `ref` names (id, unique id prefix or title); raises `UnknownTask`."""
        return resolve_task(list(self.all().values()), ref)

    def create(
        self,
        schedule: Schedule,
        *,
        prompt: str,
        title: str | None = None,
        reminder: bool = False,
        allowed_tools: Sequence[str] = (),
        tool_budget: int = DEFAULT_BUDGET,
        conversation_id: str | None = None,
    ) -> Task:
        """Make a task. Its schedule must be computable and due at least once from now
        (`ScheduleError`, `RefusedError` otherwise); without `conversation_id` it gets a
        conversation of its own. Returns it as the log now has it."""
        text = prompt.strip()
        if not text:
            raise RefusedError("a task needs a prompt (or a reminder's text)")
        name = _title(title or text)
        self._check(schedule, tool_budget)
        if conversation_id is None:
            made = ConversationBook(self.log).create(f"Task: {name}", purpose=TASK_RUNS)
            conversation_id = made.id
        task_id = str(uuid.uuid4())
        event = TaskEvent(
            action="created",
            task_id=task_id,
            title=name,
            prompt=text,
            reminder=reminder,
            allowed_tools=list(dict.fromkeys(allowed_tools)),
            tool_budget=tool_budget,
            device=self.device or None,
            at=self.clock().isoformat(),
            **schedule_fields(schedule),
        )
        self.log.append(conversation_id, [event])
        return self.all()[task_id]

    def _check(self, schedule: Schedule, tool_budget: int) -> None:
        check(schedule)
        if tool_budget < 0:
            raise RefusedError("a task's tool budget cannot be negative")
        if next_due(schedule, self.clock()) is None:
            raise RefusedError("that schedule has no time left to run at (a time passed?)")

    def change(
        self,
        ref: str,
        *,
        title: str | None = None,
        prompt: str | None = None,
        schedule: Schedule | None = None,
        reminder: bool | None = None,
        allowed_tools: Sequence[str] | None = None,
        tool_budget: int | None = None,
    ) -> Task:
        """Change what is given (a new schedule counts from now: no time before it runs)."""
        task = self.get(ref)
        if schedule is not None:
            self._check(schedule, tool_budget or 0)
        elif tool_budget is not None and tool_budget < 0:
            raise RefusedError("a task's tool budget cannot be negative")
        if prompt is not None and not prompt.strip():
            raise RefusedError("a task needs a prompt (or a reminder's text)")
        event = TaskEvent(
            action="changed",
            task_id=task.id,
            title=_title(title) if title is not None else None,
            prompt=prompt.strip() if prompt is not None else None,
            reminder=reminder,
            allowed_tools=list(dict.fromkeys(allowed_tools)) if allowed_tools is not None else None,
            tool_budget=tool_budget,
            at=self.clock().isoformat(),
            **(schedule_fields(schedule) if schedule is not None else {}),
        )
        return self._append(task, event)

    def pause(self, ref: str) -> Task:
        """Stop running it until resumed (times passed meanwhile are not run)."""
        return self._mark(ref, "paused")

    def resume(self, ref: str) -> Task:
        """Run it again from its next time after now."""
        return self._mark(ref, "resumed")

    def remove(self, ref: str) -> Task:
        """Remove it: it never runs again; its events stay in the log."""
        return self._mark(ref, "removed")

    def _mark(self, ref: str, action: TaskAction) -> Task:
        task = self.get(ref)
        at = self.clock().isoformat()
        return self._append(task, TaskEvent(action=action, task_id=task.id, at=at))

    def _append(self, task: Task, event: TaskEvent) -> Task:
        self.log.append(task.conversation_id, [event])
        return self.all()[task.id]

    def due(self, now: datetime | None = None) -> builtins.list[DueRun]:
        """The runs due at `now` (the clock's time by default) of the tasks this device
        runs (its own and those nobody owns), soonest first."""
        return due_runs(self.all().values(), now or self.clock(), device=self.device or None)

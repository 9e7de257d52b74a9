"""Scheduled tasks, folded from the log's `task` events: what each is, when it is next due,
how its last run went, and which runs are due now.

A task is its events (domain/events.py `TaskEvent`): created, changed, paused, resumed,
removed, and for each run `run_started` then `run_finished`. Nothing is updated in place.
The next due time counts from the latest of: the task's creation, its last schedule change,
its last resume and its last run's due time, so a time is never due twice, and times that
passed while it was paused are not run. Pure: the time `now` is always passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.schedules import (
    SCHEDULE_KINDS,
    Schedule,
    ScheduleError,
    check,
    last_due,
    next_due,
)
from koroku_desktop.domain.task_records import TaskRecord, record_of
from koroku_desktop.domain.task_words import describe

if TYPE_CHECKING:
    from koroku_desktop.domain.events import LogEntry

__all__ = [
    "LATE_AFTER",
    "DueRun",
    "RunRecord",
    "Schedule",
    "ScheduleError",
    "Task",
    "check",
    "describe",
    "due_key",
    "due_runs",
    "fold_records",
    "fold_tasks",
    "next_due",
    "resolve_task",
    "schedule_fields",
]

LATE_AFTER = timedelta(minutes=5)
"""A run that starts more than this after its due time is marked late."""
ID_PREFIX_MIN = 4
RUNNING = "running"
"""The outcome of a run that started and has not finished (or whose process died)."""
OUTCOMES = ("ok", "failed", "needs_approval", "notified", "skipped")


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run of a task, for one due time. `outcome` is `running` until it finishes."""

    due: datetime
    started_at: datetime
    finished_at: datetime | None
    outcome: str
    turn_id: str | None
    late: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """What a person says a task is: the task form's fields. `reminder`: notify only, no
    model call; `conversation_id` "" (in a form) is a new conversation of its own."""

    title: str
    prompt: str
    reminder: bool
    schedule: Schedule
    allowed_tools: tuple[str, ...]
    tool_budget: int
    conversation_id: str


@dataclass(frozen=True, slots=True)
class Task(TaskSpec):
    """One scheduled task as the log says it stands: its spec and its state. `next_due` is
    None when it is paused, removed, finished or cannot be computed (then `problem` says
    why, in one line)."""

    id: str
    paused: bool
    removed: bool
    device: str
    created_at: datetime
    last_run: RunRecord | None
    next_due: datetime | None
    problem: str = ""

    @property
    def short_id(self) -> str:
        """The first 8 characters of the id, as lists show it."""
        return self.id[:8]


@dataclass(frozen=True, slots=True)
class DueRun:
    """A run to make now: `due` is the time it is for (the latest one passed, when several
    were missed: `missed` then), `late` when it starts well after that time."""

    task: Task
    due: datetime
    late: bool
    missed: bool = False


def due_key(moment: datetime) -> str:
    """A due time as a run event records it (ISO, UTC, whole seconds)."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()


def schedule_fields(schedule: Schedule) -> dict[str, str]:
    """The `schedule_*` fields of a `TaskEvent` that records `schedule`."""
    return {
        "schedule_kind": schedule.kind,
        "schedule_rule": schedule.rule,
        "schedule_tz": schedule.tz,
        "schedule_start": schedule.start.isoformat(),
    }


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


def _moment(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        raise ValueError(f"“{text}” has no zone")
    return value


@dataclass
class _Draft:
    id: str
    conversation_id: str
    created_at: datetime
    anchor: datetime
    title: str = ""
    prompt: str = ""
    reminder: bool = False
    schedule_kind: str = "once"
    schedule_rule: str = ""
    schedule_tz: str = "UTC"
    schedule_start: str = ""
    allowed_tools: tuple[str, ...] = ()
    tool_budget: int = 0
    device: str = ""
    paused: bool = False
    removed: bool = False
    runs: dict[str, RunRecord] = field(default_factory=dict)
    last_due: str = ""
    problem: str = ""


def _set(draft: _Draft, event: TaskRecord, at: datetime) -> None:
    for name in ("title", "prompt", "reminder", "tool_budget", "device"):
        value = getattr(event, name)
        if value is not None:
            setattr(draft, name, value)
    if event.allowed_tools is not None:
        draft.allowed_tools = event.allowed_tools
    if event.schedule_kind is not None:
        draft.schedule_kind = event.schedule_kind
        draft.schedule_rule = event.schedule_rule or ""
        draft.schedule_tz = event.schedule_tz or "UTC"
        draft.schedule_start = event.schedule_start or ""
        draft.anchor = max(draft.anchor, at)


def _run(draft: _Draft, event: TaskRecord, at: datetime) -> None:
    if not event.due:
        return
    try:
        due = _moment(event.due)
    except ValueError:
        return
    key = due_key(due)
    known = draft.runs.get(key)
    if event.action == "run_started":
        if known is None:
            draft.runs[key] = RunRecord(due, at, None, RUNNING, None, bool(event.late))
    else:
        base = known or RunRecord(due, at, None, RUNNING, None, bool(event.late))
        draft.runs[key] = replace(
            base,
            finished_at=at,
            outcome=event.outcome or "ok",
            turn_id=event.run_turn_id,
            late=bool(event.late) if event.late is not None else base.late,
            detail=event.detail or "",
        )
    if not draft.last_due or due > _moment(draft.last_due):
        draft.last_due = key
    draft.anchor = max(draft.anchor, due)


def _when(event: TaskRecord) -> datetime:
    """When the event happened: its `at` (the writer's clock), else when it was stored."""
    if event.at:
        try:
            return _moment(event.at)
        except ValueError:
            pass
    return _utc(event.stored_at)


def _apply(draft: _Draft, event: TaskRecord) -> None:
    at = _when(event)
    match event.action:
        case "created" | "changed":
            _set(draft, event, at)
        case "paused":
            draft.paused = True
        case "resumed":
            draft.paused = False
            draft.anchor = max(draft.anchor, at)
        case "removed":
            draft.removed = True
        case "run_started" | "run_finished":
            _run(draft, event, at)


def _finish(draft: _Draft) -> Task:
    problem = ""
    start = draft.created_at
    try:
        start = _moment(draft.schedule_start) if draft.schedule_start else draft.created_at
    except ValueError:
        problem = f"bad start time “{draft.schedule_start}”"
    kind = draft.schedule_kind if draft.schedule_kind in SCHEDULE_KINDS else "once"
    schedule = Schedule(kind, draft.schedule_rule, draft.schedule_tz, start)
    if not problem and draft.schedule_kind not in SCHEDULE_KINDS:
        problem = f"unknown schedule kind “{draft.schedule_kind}”"
    upcoming: datetime | None = None
    if not problem:
        try:
            check(schedule)
            if not (draft.paused or draft.removed):
                upcoming = next_due(schedule, draft.anchor)
        except ScheduleError as exc:
            problem = str(exc)
    last = draft.runs.get(draft.last_due) if draft.last_due else None
    return Task(
        id=draft.id,
        title=draft.title or draft.prompt[:60] or draft.id[:8],
        prompt=draft.prompt,
        reminder=draft.reminder,
        schedule=schedule,
        allowed_tools=draft.allowed_tools,
        tool_budget=draft.tool_budget,
        conversation_id=draft.conversation_id,
        paused=draft.paused,
        removed=draft.removed,
        device=draft.device,
        created_at=draft.created_at,
        last_run=last,
        next_due=upcoming,
        problem=problem,
    )


def fold_records(records: Iterable[TaskRecord]) -> dict[str, Task]:
    """Every task the records name, by id (removed ones included), in log order. A task
    whose events say nothing usable about its schedule gets `problem`, not an error; run
    events for a task never created are left out."""
    drafts: dict[str, _Draft] = {}
    for event in sorted(records, key=lambda r: r.order):
        draft = drafts.get(event.task_id)
        if draft is None:
            if event.action != "created":
                continue
            at = _when(event)
            draft = drafts[event.task_id] = _Draft(event.task_id, event.conversation_id, at, at)
        _apply(draft, event)
    return {tid: _finish(d) for tid, d in drafts.items()}


def fold_tasks(events: Iterable[LogEntry]) -> dict[str, Task]:
    """Every task the log's `task` events name, by id (see `fold_records`); other events
    and damaged rows are passed over."""
    from koroku_desktop.domain.events import StoredEvent

    records = (record_of(e) for e in events if isinstance(e, StoredEvent))
    return fold_records(r for r in records if r is not None)


def due_runs(tasks: Iterable[Task], now: datetime, *, device: str | None = None) -> list[DueRun]:
    """The runs to make at `now`, soonest first: one per task that is due (neither paused,
    removed nor damaged; with `device`, only tasks that device owns or nobody owns). Times
    missed while nothing ran (the machine asleep or off) make one late run, of the latest."""
    found: list[DueRun] = []
    for task in tasks:
        if task.paused or task.removed or task.problem or task.next_due is None:
            continue
        if device is not None and task.device and task.device != device:
            continue
        if task.next_due > now:
            continue
        try:
            latest = last_due(task.schedule, task.next_due - timedelta(microseconds=1), now)
        except ScheduleError:
            continue
        if latest is None:
            continue
        due, missed = latest
        found.append(DueRun(task, due, missed or now - due > LATE_AFTER, missed))
    return sorted(found, key=lambda r: (r.due, r.task.id))


class UnknownTask(RefusedError, LookupError):
    """No task has that id, id prefix or title."""


def resolve_task(tasks: Sequence[Task], ref: str) -> Task:
    """The task `ref` names: its id, an id prefix (at least 4 characters) or its title
    (exact, then case-insensitive); removed tasks are not named. Raises `UnknownTask`."""
    wanted = ref.strip()
    live = [t for t in tasks if not t.removed]
    tries = [
        [t for t in tasks if t.id == wanted],
        [t for t in live if len(wanted) >= ID_PREFIX_MIN and t.id.startswith(wanted)],
        [t for t in live if t.title == wanted],
        [t for t in live if t.title.casefold() == wanted.casefold()],
    ]
    for matches in tries:
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            names = ", ".join(f"{t.title} ({t.short_id})" for t in matches[:5])
            raise UnknownTask(f"“{wanted}” names {len(matches)} tasks ({names}); give the id")
    raise UnknownTask(f"no task “{wanted}” (`koroku tasks list` lists them)")

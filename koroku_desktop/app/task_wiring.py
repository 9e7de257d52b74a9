"""Tasks for the front ends: the book over a runtime's log, and the runner with its own
turn lease (front end `tasks`), agents built from the runtime's model, tools and options."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.ports import Approver, Notifier
from koroku_desktop.agent.task_runs import HeadlessApprover, TaskRunner, agent_factory
from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.app.paths import Paths
from koroku_desktop.app.runtime import Runtime, build_runtime
from koroku_desktop.app.task_peek import this_device
from koroku_desktop.domain.ids import writer_name
from koroku_desktop.store.db_errors import open_event_log
from koroku_desktop.store.local_lease import SqliteTurnLock


def task_book(runtime: Runtime, clock: Callable[[], datetime]) -> TaskBook:
    """The tasks of the runtime's log; tasks made here belong to this device."""
    return TaskBook(runtime.log, clock, device=this_device())


@dataclass
class TaskRuns:
    """A runner and the lease it holds its claims and turns under; `close` gives it back."""

    runner: TaskRunner
    lease: SqliteTurnLock

    def close(self) -> None:
        """Give back any lease still held."""
        self.lease.close()


def task_runs(
    runtime: Runtime,
    notifier: Notifier,
    clock: Callable[[], datetime],
    *,
    approver: Approver | None = None,
) -> TaskRuns:
    """A runner for the runtime's log. Its lease is its own (front end `tasks`), so a task
    run and a turn of the person in one conversation wait for each other, in one process
    as across processes. Each run's agent shares the runtime's model, tools, recall and
    facts, with the task's own policy, approver and tool budget."""
    lease = SqliteTurnLock(runtime.paths.db, "tasks")
    main = runtime.agent

    def setup(agent: Agent) -> None:
        agent.recall = main.recall
        agent.facts = main.facts
        agent.calls.remember = main.calls.remember

    make = agent_factory(
        runtime.log,
        main.model,
        runtime.tools,
        main.options,
        turn_lock=lease,
        clock=clock,
        setup=setup,
    )
    runner = TaskRunner(runtime.log, make, notifier, clock, turn_lock=lease, approver=approver)
    return TaskRuns(runner, lease)


def local_zone() -> str:
    """The IANA name of this machine's time zone (`TZ`, /etc/localtime, /etc/timezone),
    UTC when none can be told."""
    from zoneinfo import available_timezones

    tz = os.environ.get("TZ", "").strip().lstrip(":")
    known = available_timezones()
    if tz in known:
        return tz
    link = Path("/etc/localtime")
    if link.is_symlink():
        target = str(link.resolve())
        if "zoneinfo/" in target:
            name = target.split("zoneinfo/", 1)[1]
            if name in known:
                return name
    try:
        name = Path("/etc/timezone").read_text(encoding="utf-8").strip()
    except OSError:
        name = ""
    return name if name in known else "UTC"


@contextlib.contextmanager
def open_task_book(
    paths: Paths, clock: Callable[[], datetime], *, read_only: bool = False
) -> Iterator[TaskBook]:
    """The tasks of the data dir's log, without the rest of the runtime (`koroku tasks`).
    `DatabaseUnavailable` when the log cannot be opened."""
    log = open_event_log(paths.db, read_only=read_only, writer=writer_name("tasks"))
    try:
        yield TaskBook(log, clock, device=this_device())
    finally:
        log.close()


def open_runtime_for(paths: Paths, conversation_id: str, clock: Callable[[], datetime]) -> Runtime:
    """The full runtime a task run needs (the model, tools, recall), opened in the task's
    conversation so that opening it starts none. Headless: nobody answers approvals."""
    return build_runtime(
        HeadlessApprover(), paths, front_end="tasks", clock=clock, conversation=conversation_id
    )

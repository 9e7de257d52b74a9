"""Tasks for the front ends: the book over a runtime's log, and the runner with its own
turn lease (front end `tasks`), its agents built by the runtime's `AgentKit`."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.ports import Approver, Notifier, TurnLock
from koroku_desktop.agent.task_runs import HeadlessApprover, TaskRunner
from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.app.agent_pool import AgentKit
from koroku_desktop.app.paths import Paths
from koroku_desktop.app.runtime import Runtime, build_runtime
from koroku_desktop.app.task_peek import this_device
from koroku_desktop.domain.ids import writer_name
from koroku_desktop.domain.tasks import Task
from koroku_desktop.store.db_errors import open_event_log
from koroku_desktop.store.local_lease import SqliteTurnLock
from koroku_desktop.tools.approval import ApprovalPolicy


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
) -> TaskRuns:
    """A runner for the runtime's log. Its lease is its own (front end `tasks`), so a task
    run and a turn of the person in one conversation wait for each other, in one process
    as across processes. Each run's agent is built by the runtime's kit (see `task_agents`)."""
    lease = SqliteTurnLock(runtime.paths.db, "tasks")
    make = task_agents(runtime.kit, lease, clock)
    runner = TaskRunner(runtime.log, make, notifier, clock, turn_lock=lease)
    return TaskRuns(runner, lease)


def task_agents(
    kit: AgentKit, lease: TurnLock, clock: Callable[[], datetime]
) -> Callable[[Task, ApprovalPolicy, Approver], Agent]:
    """Agents for task runs, built by `kit` as every conversation's is (model, tools,
    recall, memories, facts, titles): each in its task's conversation under `lease`, with
    the task's policy, approver and tool budget (a copy of the kit's options)."""

    def make(task: Task, policy: ApprovalPolicy, approver: Approver) -> Agent:
        options = dataclasses.replace(kit.options, max_tool_calls=task.tool_budget)
        agent = kit.agent(
            task.conversation_id,
            task.title,
            approver=approver,
            policy=policy,
            options=options,
            turn_lock=lease,
        )
        agent.clock = clock
        return agent

    return make


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

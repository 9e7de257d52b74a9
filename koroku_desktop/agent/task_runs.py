"""Running a due task: claimed once, run unattended within what it was granted, recorded.

A run is claimed by appending `run_started` for (task, due) while holding the task
conversation's turn lease, after re-reading the log: a second process (or device) that
comes for the same due time finds the claim and skips, so a time never runs twice. A
reminder only notifies. A prompt runs as a turn in the task's conversation by an agent of
its own: only the tools granted to the task run without asking, within the task's tool
budget; any other call goes to the `approver` (headless: refused, the run records
`needs_approval` and notifies). `run_finished` records the outcome, and a notification
shows the reply's first lines. A failed model call records `failed`; the task runs again
at its next time (a run is never retried for the same time).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.ports import (
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    EventLog,
    Notifier,
    TurnLock,
)
from koroku_desktop.agent.tasks import task_events
from koroku_desktop.agent.turn_gate import acquire_lease
from koroku_desktop.domain.events import TaskEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.tasks import DueRun, RunRecord, Task, due_key, fold_tasks
from koroku_desktop.tools.approval import ApprovalPolicy, ToolLookup

log = logging.getLogger(__name__)

NOTIFY_LINES = 3
NOTIFY_CHARS = 300


class TaskPolicy(ApprovalPolicy):
    """An unattended run's policy: the task's granted tools run without asking (unless a
    call always asks, e.g. a secret path, or an MCP server marks the tool destructive);
    every other tool asks, even one that never asks when the person is there."""

    def __init__(self, granted: Sequence[str]) -> None:
        super().__init__(always=granted)

    def needs_asking(
        self,
        tool_name: str,
        registry: ToolLookup,
        args: dict[str, Any] | None = None,
        workspace: Path | None = None,
    ) -> bool:
        """Ask unless granted to the task, then as the base policy says of a granted tool."""
        if not self.is_granted(tool_name):
            return True
        return super().needs_asking(tool_name, registry, args, workspace)

    def grant(self, tool_name: str, scope: Any) -> None:
        """A yes in a run holds for that call only: nothing is remembered."""


class HeadlessApprover:
    """Nobody is there to ask: every call that needs asking is refused, with a reason the
    model reads (the run then records `needs_approval`)."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """Refuse, saying why."""
        return ApprovalDecision(
            allowed=False,
            reason=(
                f"not run: this scheduled task may not use {request.tool} unattended; the "
                "person was notified and can run the task themselves"
            ),
        )


class _Asked:
    """Passes requests to the run's approver and keeps what was asked and refused."""

    def __init__(self, inner: Approver) -> None:
        self.inner = inner
        self.refused: list[str] = []

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        decision = await self.inner.approve(request)
        if not decision.allowed:
            self.refused.append(request.tool)
        return decision


def _claimable(task: Task, due: DueRun) -> bool:
    """Whether `due` is still to run as `task` (folded from the log just now) stands: not
    paused, removed, nor run for that time or a later one. A run its schedule made (its
    task was due at `due.due` when it was computed, e.g. by run-due's peek) also only while
    the log still says so: not when, in between, the schedule was changed or the task
    resumed (both count from then on), or it went to another device. A run asked for now
    (`koroku tasks run`, Run now) is due whatever the schedule says."""
    if task.paused or task.removed:
        return False
    key = due.due.replace(microsecond=0)
    if task.last_run is not None and task.last_run.due >= key:
        return False
    planned = due.task.next_due is not None and due.task.next_due <= due.due
    if not planned:
        return True
    return task.device == due.task.device and task.next_due is not None and task.next_due <= due.due


def first_lines(text: str) -> str:
    """The first few non-empty lines of a reply, cut to a notification's length."""
    lines = [line.strip() for line in text.splitlines() if line.strip()][:NOTIFY_LINES]
    body = "\n".join(lines)
    return body if len(body) <= NOTIFY_CHARS else body[: NOTIFY_CHARS - 1].rstrip() + "…"


@dataclass(eq=False)
class TaskRunner:
    """Runs due tasks over one log. `make_agent(task, policy, approver)` builds the agent a
    prompt's turn runs in (the composition root wires it: app/task_wiring.py `task_agents`);
    `turn_lock` is the lease runs are claimed under (None: this process only). Its
    notifications are tagged with the task's id and name no actions: the notifier offers
    Open and Snooze where someone can act on them (app/notifications.make_notifier)."""

    log: EventLog
    make_agent: Callable[[Task, ApprovalPolicy, Approver], Agent]
    notifier: Notifier
    clock: Callable[[], datetime]
    _: KW_ONLY
    turn_lock: TurnLock | None = None
    _local: dict[str, asyncio.Lock] = field(init=False, default_factory=dict)

    @contextlib.asynccontextmanager
    async def _lease(self, conversation_id: str, turn_id: str) -> AsyncIterator[None]:
        async with self._local.setdefault(conversation_id, asyncio.Lock()):
            if self.turn_lock is None:
                yield
                return
            lock = self.turn_lock
            await acquire_lease(lock, conversation_id, turn_id, wait=True, on_wait=lambda _h: None)
            try:
                yield
            finally:
                await asyncio.to_thread(lock.release, conversation_id)

    def _claim(self, due: DueRun, turn_id: str) -> Task | None:
        """Under the lease: the task as it stands, with `run_started` appended for this due
        time; None when the log, re-read now, says it is not to run (`_claimable`)."""
        task = fold_tasks(task_events(self.log)).get(due.task.id)
        if task is None or not _claimable(task, due):
            return None
        started = TaskEvent(
            action="run_started",
            task_id=task.id,
            due=due_key(due.due),
            late=due.late,
            at=self.clock().isoformat(),
            run_turn_id=None if task.reminder else turn_id,
            device=task.device or None,
        )
        self.log.append(task.conversation_id, [started])
        return task

    async def run(self, due: DueRun, approver: Approver | None = None) -> RunRecord:
        """Claim and make one run; its record (`skipped` when it was not this one's to run).
        `approver` answers this run's calls the task was not granted (default: a
        `HeadlessApprover`): a front end running several at once tells them apart by it."""
        turn_id = new_id()
        started_at = self.clock()
        async with self._lease(due.task.conversation_id, turn_id):
            task = await asyncio.to_thread(self._claim, due, turn_id)
        if task is None:
            return RunRecord(
                due.due,
                started_at,
                started_at,
                "skipped",
                None,
                due.late,
                "already run for this time, or changed, paused or removed since",
            )
        try:
            if task.reminder:
                outcome, detail, ran = self._remind(task, due), task.prompt, None
            else:
                outcome, detail, ran = await self._turn(
                    task, due, turn_id, approver or HeadlessApprover()
                )
        except Exception as exc:  # a run that breaks is recorded as failed, never lost
            log.exception("task %s failed", task.id)
            outcome, detail, ran = "failed", f"{type(exc).__name__}: {exc}", None
            self.notifier.notify(f"Task failed: {task.title}", detail, tag=task.id)
        finished = TaskEvent(
            action="run_finished",
            task_id=task.id,
            due=due_key(due.due),
            late=due.late,
            outcome=outcome,
            run_turn_id=ran,
            detail=detail,
            at=self.clock().isoformat(),
        )
        await asyncio.to_thread(self.log.append, task.conversation_id, [finished])
        return RunRecord(due.due, started_at, self.clock(), outcome, ran, due.late, detail)

    def _remind(self, task: Task, due: DueRun) -> str:
        late = " (late)" if due.late else ""
        body = "" if task.prompt == task.title else task.prompt
        self.notifier.notify(f"Reminder{late}: {task.title}", body, tag=task.id)
        return "notified"

    async def _turn(
        self, task: Task, due: DueRun, turn_id: str, approver: Approver
    ) -> tuple[str, str, str]:
        asked = _Asked(approver)
        agent = self.make_agent(task, TaskPolicy(task.allowed_tools), asked)
        result: TurnResult = await agent.run_turn(task.prompt, turn_id=turn_id)
        late = " (late)" if due.late else ""
        if result.error is not None or result.cancelled:
            detail = str(result.error) if result.error is not None else "cancelled"
            self.notifier.notify(f"Task failed{late}: {task.title}", detail, tag=task.id)
            return "failed", detail, turn_id
        reply = first_lines(result.text)
        if asked.refused:
            tools = ", ".join(sorted(set(asked.refused)))
            detail = f"waiting for approval: {tools} (not granted to this task)"
            self.notifier.notify(
                f"Task needs your approval{late}: {task.title}",
                f"It wanted to use {tools}.\n{reply}",
                tag=task.id,
            )
            return "needs_approval", detail, turn_id
        self.notifier.notify(f"{task.title}{late}", reply or "(no text)", tag=task.id)
        return "ok", reply, turn_id

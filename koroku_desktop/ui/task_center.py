"""TaskCenter: scheduled tasks in the running app — the scheduler on the Qt loop, desktop
notifications with their Open and Snooze actions, approvals a run waits for, the tray's
unread mark, and the Tasks tab's operations (`TaskDesk`).

Split out of `ui/app.py`, which only makes one and wires it to the window, the tray and the
conversation switcher. Runs go through the core's `TaskRunner`; a run's tool call the task
was not granted waits as the normal approval card in the task's conversation (the chat
switches there when the person opens the notification) and a notification says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QEvent, QObject, Signal, SignalInstance

from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest, Notifier
from koroku_desktop.app.notifications import TASK_ACTIONS, make_notifier
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.app.schedule_wiring import give_schedule, schedule_writer, snooze
from koroku_desktop.app.task_peek import this_device
from koroku_desktop.app.task_wiring import task_book, task_runs
from koroku_desktop.domain.events import StoredEvent, TaskEvent
from koroku_desktop.domain.tasks import DueRun, RunRecord, Task, TaskSpec, due_key
from koroku_desktop.fsutil import HeldLock, try_exclusive_lock
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.window import ChatWindow
from koroku_desktop.ui.conversation_switcher import ConversationSwitcher
from koroku_desktop.ui.resume_watch import ResumeWatch
from koroku_desktop.ui.task_scheduler import TaskScheduler
from koroku_desktop.ui.tasks.panel import TasksPanel
from koroku_desktop.ui.tray_notices import TrayNotices
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

(OPEN, _), (SNOOZE, _) = TASK_ACTIONS
LOCK_RETRY_S = 30.0
"""How soon the app tries again for the task-runner lock a `run-due` holds."""


class TaskCenter(QObject):
    """The app's scheduled tasks (see the module doc)."""

    open_requested = Signal(str)  # a conversation id to show (a notification's Open)
    result_landed = Signal(str)  # the conversation a run's result went to
    changed = Signal()  # a task was made, changed or ran here (the Tasks tab reads again)

    def __init__(
        self,
        runtime: Runtime,
        approve_in_chat: Callable[[ApprovalRequest], Awaitable[ApprovalDecision]],
        current_conversation: Callable[[], str],
        clock: Callable[[], datetime] | None = None,
        parent: QObject | None = None,
        *,
        notifier: Notifier | None = None,
    ) -> None:
        super().__init__(parent)
        self.runtime = runtime
        # The agent's clock (injected in tests) is naive local time by default: made aware.
        self.clock = clock or (lambda: runtime.agent.clock().astimezone())
        self.book = task_book(runtime, self.clock)
        device = this_device()
        self._approve_in_chat = approve_in_chat
        self._current = current_conversation
        self._jobs = TaskSet()
        self._shown: asyncio.Event = asyncio.Event()
        self.notifier = notifier or make_notifier(on_action=self._action_from_bus)
        self.runs = task_runs(runtime, self.notifier, self.clock)
        self.runner = self.runs.runner
        self.scheduler = TaskScheduler(self.book.list, self._run, self.clock, self, device=device)
        self.resume_watch = ResumeWatch(self.scheduler.rearm)
        self._finished: dict[str, str] | None = None
        """Each task's last finished run (its due key) as last read; None before a read."""
        self.scheduler.read.connect(self._runs_read)
        self._loop: asyncio.AbstractEventLoop | None = None
        give_schedule(runtime, schedule_writer(self.book))
        self._runner_lock: HeldLock | None = None
        self._lock_retry: asyncio.TimerHandle | None = None
        runtime.tools.switched_off.discard("schedule")  # this app runs what it schedules
        self.panel: TasksPanel | None = None
        self._switcher: ConversationSwitcher | None = None
        self._seen: Callable[[], None] | None = None
        self._outside: list[tuple[SignalInstance, Callable[..., None]]] = []
        self._window: ChatWindow | None = None

    async def start(self) -> None:
        """Arm the scheduler and listen for resumes; say (by the lock) that this app runs
        the due tasks here, so the timer's `koroku tasks run-due` leaves them to it."""
        self._loop = asyncio.get_running_loop()
        self._take_runner_lock()
        self.scheduler.rearm()
        await self.resume_watch.start()

    def _take_runner_lock(self) -> None:
        """Hold the task-runner lock; while a `run-due` holds it, try again in a while (its
        claims keep a due time from running twice meanwhile)."""
        self._lock_retry = None
        try:
            self._runner_lock = try_exclusive_lock(self.runtime.paths.task_runner_lock)
        except OSError as exc:  # a read-only data dir: run-due may run them too
            log.info("could not take the task-runner lock: %s", exc)
            return
        if self._runner_lock is None and self._loop is not None:
            self._lock_retry = self._loop.call_later(LOCK_RETRY_S, self._take_runner_lock)

    async def close(self) -> None:
        """Stop running tasks and listening."""
        self._unwire()
        await self.scheduler.stop()
        await self.resume_watch.close()
        await self._jobs.cancel()
        self.runs.close()  # a lease still held is given back
        if self._lock_retry is not None:
            self._lock_retry.cancel()
        if self._runner_lock is not None:
            self._runner_lock.release()  # the timer's run-due takes over
        close = getattr(self.notifier, "close", None)
        if close is not None:
            await asyncio.to_thread(close)

    # -- runs --------------------------------------------------------------------------

    async def _run(self, due: DueRun) -> RunRecord:
        record: RunRecord = await self.runner.run(due, _RunApprover(self, due.task))
        if record.outcome != "skipped":
            if self._finished is not None:
                self._finished[due.task.id] = due_key(record.due)
            if self._current() == due.task.conversation_id:
                await self.runtime.agent.catch_up()  # the chat shows it: the run's turn too
            self.result_landed.emit(due.task.conversation_id)
            self.changed.emit()
        return record

    def _runs_read(self, tasks: list[Task]) -> None:
        """The scheduler read the tasks: a run finished since the last read that this app
        did not make (another process's `koroku tasks run-due`/`run`) lands like our own.
        What ran before the app opened is not news."""
        finished = {
            t.id: due_key(t.last_run.due)
            for t in tasks
            if t.last_run is not None
            and t.last_run.finished_at is not None
            and t.last_run.outcome != "skipped"
        }
        known, self._finished = self._finished, finished
        if known is None:
            return
        for task in tasks:
            if task.id in finished and known.get(task.id) != finished[task.id]:
                self.result_landed.emit(task.conversation_id)

    async def run_now(self, task: Task) -> object:
        """Run `task` once now, out of its schedule (the Tasks tab's Run now)."""
        return await self._run(DueRun(task, self.clock(), late=False))

    async def approve_for(self, task: Task, request: ApprovalRequest) -> ApprovalDecision:
        """A call a run of `task` was not granted: a notification, then the normal card once
        the chat shows the task's conversation."""
        if self._current() != task.conversation_id:
            self.notifier.notify(
                f"{task.title}: waiting for your approval",
                f"The task wants to use {request.tool}. Open it to allow or deny.",
                actions=TASK_ACTIONS[:1],
                tag=task.id,
            )
            while self._current() != task.conversation_id:
                self._shown.clear()
                await self._shown.wait()
        return await self._approve_in_chat(request)

    def conversation_shown(self, conversation_id: str) -> None:
        """The chat now shows `conversation_id` (a waiting approval may ask there)."""
        self._shown.set()

    # -- notification actions ----------------------------------------------------------

    def _action_from_bus(self, tag: str, action: str) -> None:
        """Called on the D-Bus thread: hand it to the loop."""
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self.act, tag, action)

    def act(self, tag: str, action: str) -> None:
        """A notification's action: Open shows the task's conversation, Snooze reminds again
        in ten minutes (a one-off reminder task: it survives a restart)."""
        self._jobs.start(self._act(tag, action))

    async def _act(self, tag: str, action: str) -> None:
        try:
            task = await asyncio.to_thread(self.book.get, tag)
        except Exception:  # noqa: BLE001 — removed meanwhile, or not a task's tag
            log.info("a notification action for %r that names no task", tag)
            return
        if action == OPEN:
            self.open_requested.emit(task.conversation_id)
        elif action == SNOOZE:
            await asyncio.to_thread(snooze, self.book, task, self.clock())
            self.changed.emit()

    # -- the Tasks tab's desk ----------------------------------------------------------

    def list_tasks(self) -> list[Task]:
        """The live tasks. Blocking."""
        return self.book.list()

    def save(self, draft: TaskSpec, task_id: str | None) -> None:
        """Make a task from the form, or change `task_id` to it. Blocking."""
        if task_id is None:
            self.book.create(
                draft.schedule,
                prompt=draft.prompt or draft.title,
                title=draft.title,
                reminder=draft.reminder,
                allowed_tools=draft.allowed_tools,
                tool_budget=draft.tool_budget,
                conversation_id=draft.conversation_id or None,
            )
        else:
            self.book.change(
                task_id,
                title=draft.title,
                prompt=draft.prompt or draft.title,
                schedule=draft.schedule,
                reminder=draft.reminder,
                allowed_tools=draft.allowed_tools,
                tool_budget=draft.tool_budget,
            )

    def pause(self, task_id: str) -> None:
        """Pause it. Blocking."""
        self.book.pause(task_id)

    def resume(self, task_id: str) -> None:
        """Resume it. Blocking."""
        self.book.resume(task_id)

    def remove(self, task_id: str) -> None:
        """Remove it. Blocking."""
        self.book.remove(task_id)

    # -- the app's wiring --------------------------------------------------------------

    def wire(
        self,
        bridge: AgentBridge,
        conversations: ConversationSwitcher,
        notices: TrayNotices,
        window: ChatWindow,
        show_chat: Callable[[], None],
    ) -> None:
        """Open → the task's conversation; results → the tray's unread mark until that
        conversation is shown; log changes → the scheduler re-arms, the Tasks tab re-reads."""
        self._switcher = conversations

        def open_conversation(conversation_id: str) -> None:
            conversations.choose(conversation_id)
            show_chat()

        def landed(conversation_id: str) -> None:
            if not (window.isVisible() and self._current() == conversation_id):
                notices.mark_unread(conversation_id)

        def shown(conversation_id: str) -> None:
            self.conversation_shown(conversation_id)
            if window.isVisible():
                notices.mark_read(conversation_id)

        self.open_requested.connect(open_conversation)
        self.result_landed.connect(landed)
        window.installEventFilter(self)
        self._seen = lambda: notices.mark_read(self._current())
        self.changed.connect(self._log_changed)
        self._outside = [
            (conversations.switched, shown),
            (bridge.log_changed, self._log_changed),
            (bridge.event_appended, self._appended),
        ]
        for signal, slot in self._outside:
            signal.connect(slot)
        self._window = window

    def _unwire(self) -> None:
        """Let go of the app's objects (they are deleted after the quit)."""
        for signal, slot in self._outside:
            with contextlib.suppress(RuntimeError, TypeError):
                signal.disconnect(slot)
        self._outside = []
        if self._window is not None:
            with contextlib.suppress(RuntimeError):
                self._window.removeEventFilter(self)
            self._window = None
        self._seen = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The chat window shown: the conversation it shows is read."""
        if event.type() == QEvent.Type.Show and self._seen is not None:
            self._seen()
        return False

    def _appended(self, stored: StoredEvent) -> None:
        if isinstance(stored.event, TaskEvent):
            self._log_changed()

    def _log_changed(self) -> None:
        self.scheduler.rearm()
        if self.panel is not None and self.panel.isVisible():
            self.panel.refresh()

    def make_panel(self) -> TasksPanel:
        """The Scheduled tasks section for a new Settings dialog (it follows the log)."""
        tools = [n for n in self.runtime.tools.names() if n != "schedule"]
        self.panel = TasksPanel(self, self.clock, tools, self._conversations)
        return self.panel

    def _conversations(self) -> list[tuple[str, str]]:
        switcher = self._switcher
        listed = switcher.conversations if switcher is not None else []
        return [(c.id, c.title) for c in listed]


@dataclass(frozen=True)
class _RunApprover:
    """The approver of one run of `task`: its calls ask as that task, whichever other run
    (the scheduler's, a Run now) is under way meanwhile."""

    center: TaskCenter
    task: Task

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask through the app, as this run's task."""
        return await self.center.approve_for(self.task, request)

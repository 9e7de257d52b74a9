"""TaskScheduler: the tray app runs due tasks on the Qt loop, woken by one single-shot timer.

The timer is set for the soonest next due time of the tasks the log holds (never sooner
than `MIN_WAKE_MS` after a wake that found runs it could not advance, while the log still
says they are due, so the app never polls faster than a minute) and for at most
`MAX_SLEEP_MS` (a net for a suspend nobody reported).
It is set again whenever the log changes (a task made, changed, paused, resumed or removed,
here or in another process: the log follower's `log_changed` and the bridge's own events)
and when the system resumes (logind's `PrepareForSleep(false)`, see `resume_watch`).
Between those the idle app does not wake at all.

Each wake runs the due runs one after another through the core's `TaskRunner` (which takes
the conversation's turn lease and never runs one due time twice, across processes), then
arms again. A run's result goes to the task's conversation (the runner's turn); `ran` says
so, and `read` hands on the tasks each re-arm read (the app tells from them which runs another
process finished). The clock is injected (`Callable[[], datetime]`).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from koroku_desktop.domain.tasks import DueRun, RunRecord, Task, due_runs
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

MIN_WAKE_MS = 60_000
"""After a wake whose runs did not advance (another process holds them), wait this long."""
MAX_SLEEP_MS = 6 * 3600 * 1000
"""The longest single sleep: a net where no resume signal comes (Qt's timers stop in a
suspend, so a timer armed before one would fire late by the time slept)."""


class TaskScheduler(QObject):
    """Runs due tasks on the loop; one single-shot timer for the soonest due time."""

    ran = Signal(object, object)  # Task, RunRecord
    """A run finished (any outcome) for the task."""
    armed = Signal(object)  # datetime | None: when it will wake next (None: nothing due)
    read = Signal(object)  # list[Task]: the tasks as a re-arm read them from the log

    def __init__(
        self,
        read_tasks: Callable[[], Sequence[Task]],
        run: Callable[[DueRun], object],
        clock: Callable[[], datetime],
        parent: QObject | None = None,
        *,
        device: str | None = None,
    ) -> None:
        """`read_tasks` reads the log's tasks (blocking: run in a worker thread); `run` is
        `TaskRunner.run` (a coroutine function: one due run, its `RunRecord`)."""
        super().__init__(parent)
        self._read_tasks = read_tasks
        self._run = run
        self._clock = clock
        self._device = device
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        # Precise: a coarse timer may fire up to 5 % early, which finds nothing due and
        # costs a second wake for the same time.
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self.wake)
        self._tasks = TaskSet()
        self._reading = False
        self._again = False
        self._running = False
        self._stopped = False
        self._stuck: set[tuple[str, datetime]] = set()
        self.next_wake: datetime | None = None
        self.wakes = 0
        """How many times the timer woke the scheduler (the benchmark counts them)."""

    # -- arming ------------------------------------------------------------------------

    def rearm(self, *_args: object) -> None:
        """Read the tasks again and set the timer (the log changed, the system resumed)."""
        if self._stopped:
            return
        if self._reading or self._running:
            self._again = True
            return
        self._reading = True
        self._tasks.start(self._arm())

    async def _arm(self) -> None:
        try:
            tasks = await asyncio.to_thread(self._read_tasks)
        except Exception:  # a database that cannot be read now: try again in a while
            log.warning("could not read the scheduled tasks", exc_info=True)
            self._start_timer(MIN_WAKE_MS, None)
            return
        finally:
            self._reading = False
        if self._stopped:
            return
        self.read.emit(list(tasks))
        if self._again:
            self._again = False
            self.rearm()
            return
        self.arm_for(tasks)

    def arm_for(self, tasks: Sequence[Task]) -> None:
        """Set the timer for the soonest due time among `tasks` (now when one is due)."""
        now = self._clock()
        soonest = min(
            (
                t.next_due
                for t in tasks
                if t.next_due is not None
                and not (t.paused or t.removed or t.problem)
                and (self._device is None or not t.device or t.device == self._device)
            ),
            default=None,
        )
        if soonest is None:
            self._timer.stop()
            self.next_wake = None
            self.armed.emit(None)
            return
        wait_ms = max(0, math.ceil((soonest - now).total_seconds() * 1000))
        self._stuck = _still_held(self._stuck, tasks)
        if self._stuck and wait_ms < MIN_WAKE_MS:
            wait_ms = MIN_WAKE_MS  # those runs did not advance: not a tight loop
        self._start_timer(min(wait_ms, MAX_SLEEP_MS), soonest)

    def _start_timer(self, wait_ms: int, soonest: datetime | None) -> None:
        self.next_wake = self._clock() + timedelta(milliseconds=wait_ms)
        self._timer.start(wait_ms)
        self.armed.emit(soonest)

    @property
    def interval_ms(self) -> int | None:
        """The armed timer's interval (None: not armed)."""
        return self._timer.interval() if self._timer.isActive() else None

    # -- running -----------------------------------------------------------------------

    def wake(self) -> None:
        """The timer fired: run what is due."""
        if self._running or self._stopped:
            return
        self.wakes += 1
        self._running = True
        self._tasks.start(self._run_due())

    async def _run_due(self) -> None:
        stuck: set[tuple[str, datetime]] = set()
        try:
            tasks = await asyncio.to_thread(self._read_tasks)
            for due in due_runs(tasks, self._clock(), device=self._device):
                if self._stopped:
                    return
                record = await self._run_one(due)
                if record is None or record.outcome == "skipped":
                    stuck.add((due.task.id, due.due))
                else:
                    self.ran.emit(due.task, record)
        except Exception:
            log.warning("could not run the due tasks", exc_info=True)
        finally:
            self._running = False
            self._stuck = stuck
            self._again = False
        if not self._stopped:
            self.rearm()

    async def _run_one(self, due: DueRun) -> RunRecord | None:
        try:
            record = self._run(due)
            if asyncio.iscoroutine(record) or isinstance(record, asyncio.Future):
                record = await record
        except Exception:  # the runner records failures itself; this is a crash in it
            log.warning("the task %s could not run", due.task.id, exc_info=True)
            return None
        return record if isinstance(record, RunRecord) else None

    async def stop(self) -> None:
        """Stop waking and wait for a run under way to be cancelled."""
        self._stopped = True
        self._timer.stop()
        await self._tasks.cancel()


def _still_held(
    stuck: set[tuple[str, datetime]], tasks: Sequence[Task]
) -> set[tuple[str, datetime]]:
    """The runs of `stuck` (task id, due time) that `tasks`, read now, still say are due:
    one another process has since finished (or that was paused, changed or removed) no
    longer holds the other tasks back a minute."""
    by_id = {t.id: t for t in tasks}
    return {
        (task_id, due)
        for task_id, due in stuck
        if (task := by_id.get(task_id)) is not None
        and task.next_due is not None
        and task.next_due <= due
    }

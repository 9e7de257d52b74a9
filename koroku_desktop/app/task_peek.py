"""What `koroku tasks run-due` reads before anything else: the tasks' events, straight from
the log file, and which runs are due. Imports no pydantic, no SDK and no event log, so a
minute's timer that finds nothing due costs a few tens of milliseconds."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from koroku_desktop.domain.schedules import ScheduleError
from koroku_desktop.domain.task_records import TaskRecord
from koroku_desktop.domain.tasks import DueRun, Task, due_runs, fold_records
from koroku_desktop.store.log.task_rows import read_task_records

NOW_ENV = "KOROKU_NOW"
"""An ISO time (with its offset) the task commands take as now: for tests and rehearsals."""


def task_clock() -> Callable[[], datetime]:
    """The clock the task commands use: `KOROKU_NOW` when set (fixed), else the time now.
    A bad `KOROKU_NOW` raises `ScheduleError`."""
    fixed = os.environ.get(NOW_ENV, "").strip()
    if not fixed:
        return lambda: datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(fixed)
    except ValueError as exc:
        raise ScheduleError(f"{NOW_ENV}={fixed!r} is not an ISO time") from exc
    if moment.tzinfo is None:
        raise ScheduleError(f"{NOW_ENV}={fixed!r} needs its offset (+00:00)")
    return lambda: moment


def this_device() -> str:
    """This machine's name, the owner recorded on the tasks made here."""
    return socket.gethostname()


def peek(db: Path) -> dict[str, Task] | None:
    """Every task of the log file `db`, read the fast way; None when that cannot tell
    (a row of another shape, a newer version, a file it cannot open)."""
    records: list[TaskRecord] | None = read_task_records(db)
    return None if records is None else fold_records(records)


def peek_due(tasks: dict[str, Task], now: datetime) -> list[DueRun]:
    """The runs due at `now` of the tasks this device runs."""
    return due_runs(tasks.values(), now, device=this_device())

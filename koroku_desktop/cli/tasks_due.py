"""`koroku tasks run-due` and `koroku tasks run`: make runs, headless.

`run-due` is what the systemd timer (or the autostart loop) runs every minute, so it first
reads the tasks straight from the log file (app/task_peek.py: no pydantic, no SDK) and
exits when nothing is due, or when the desktop app runs them (it holds the data dir's
task-runner lock while it runs, and a run that needs the person waits in its chat there).
Only then does it open the runtime (the model, tools, recall) and run each due task
through `TaskRunner`: claimed once under the turn lease, the outcome recorded in the log,
a notification for each. A task that cannot run (a bad rule, an unknown zone) is one line
on stderr and does not stop the others.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime

from koroku_desktop.app.paths import Paths, default_paths
from koroku_desktop.app.task_peek import peek, peek_due
from koroku_desktop.domain.tasks import DueRun, RunRecord, Task
from koroku_desktop.fsutil import try_exclusive_lock

log = logging.getLogger(__name__)

MCP_WAIT_S = 20.0
"""How long a run waits for the MCP servers to start when it was granted one of their tools."""


def _problems(tasks: dict[str, Task]) -> None:
    for task in tasks.values():
        if task.problem and not task.removed and not task.paused:
            print(
                f"koroku tasks: “{task.title}” ({task.short_id}) cannot run: {task.problem}",
                file=sys.stderr,
            )


def run_due(clock: Callable[[], datetime]) -> int:
    """Run what is due now; exit 0 (a failed run is recorded, not an exit code)."""
    paths = default_paths()
    tasks = peek(paths.db)
    if tasks is not None:
        _problems(tasks)
        if not peek_due(tasks, clock()):
            return 0
    from koroku_desktop.app.task_wiring import open_task_book

    with open_task_book(paths, clock) as book:
        if tasks is None:  # the fast read could not tell: the full read says it once
            _problems(book.all())
        due = book.due(clock())
    if not due:
        return 0
    runner = try_exclusive_lock(paths.task_runner_lock)
    if runner is None:  # the desktop app (or another run-due) runs this device's tasks now
        log.info("the app or another koroku tasks run-due runs the due tasks now")
        return 0
    try:
        return _run(paths, due, clock)
    finally:
        runner.release()


def run_now(ref: str, clock: Callable[[], datetime]) -> int:
    """Run the task `ref` names now (not late), whatever its schedule says."""
    from koroku_desktop.app.task_wiring import open_task_book

    paths = default_paths()
    with open_task_book(paths, clock) as book:
        task = book.get(ref)
    if task.problem:
        print(f"koroku tasks: “{task.title}” cannot run: {task.problem}", file=sys.stderr)
        return 1
    now = clock().replace(microsecond=0)
    return _run(paths, [DueRun(task, now, late=False)], clock)


def _run(paths: Paths, due: list[DueRun], clock: Callable[[], datetime]) -> int:
    import asyncio

    from koroku_desktop.app.notifications import make_notifier
    from koroku_desktop.app.task_wiring import open_runtime_for, task_runs

    runtime = open_runtime_for(paths, due[0].task.conversation_id, clock)
    runs = task_runs(runtime, make_notifier(), clock)
    # MCP servers start only when a run was granted a tool that is not Koroku's own.
    granted = {t for d in due if not d.task.reminder for t in d.task.allowed_tools}
    mcp = any(not runtime.tools.is_builtin(name) for name in granted)

    async def all_runs() -> list[RunRecord]:
        if mcp:
            await runtime.start_mcp(wait_s=MCP_WAIT_S)
        try:
            return await _each(runs.runner.run, due)
        finally:
            if mcp:
                await runtime.stop_mcp()

    try:
        records = asyncio.run(all_runs())
    finally:
        runs.close()
        runtime.close()
    for run, record in zip(due, records, strict=True):
        late = " (late)" if record.late else ""
        print(f"{run.task.title} ({run.task.short_id}){late}: {record.outcome}")
    return 0


async def _each(
    run: Callable[[DueRun], Awaitable[RunRecord]], due: list[DueRun]
) -> list[RunRecord]:
    return [await run(item) for item in due]  # one after another: each claimed and recorded

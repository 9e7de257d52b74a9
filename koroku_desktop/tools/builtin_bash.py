"""Built-in `bash`: a shell command as an async subprocess in its own process group."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
from typing import ClassVar

from pydantic import Field

from koroku_desktop.domain.json_value import JsonObject
from koroku_desktop.tools.base import AgentTool, ToolContext, tool_error
from koroku_desktop.tools.env import tool_environment
from koroku_desktop.tools.truncation import CappedBuffer

log = logging.getLogger(__name__)

OUTPUT_LIMIT_CHARS = 30_000
"""stdout and stderr are each cut to about this many characters (head and tail kept)."""

KILL_GRACE_SECONDS = 1.0
"""How long a process group gets between SIGTERM and SIGKILL."""

_DRAIN_SECONDS = 2.0  # after a kill, how long to wait for the pipes to close
_CHUNK = 64 * 1024


async def _pump(stream: asyncio.StreamReader | None, buffer: CappedBuffer) -> None:
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK):
        buffer.feed(chunk)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group, SIGKILL it after a grace period, and reap the shell.

    SIGTERM and SIGKILL are sent synchronously so that even a second cancellation while we
    wait cannot leave the group running.
    """
    pgid = proc.pid  # start_new_session=True: the shell leads its own group
    _signal_group(pgid, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), KILL_GRACE_SECONDS)
    except TimeoutError:
        pass
    finally:
        # Children may outlive the shell (or ignore SIGTERM): the group always gets SIGKILL.
        _signal_group(pgid, signal.SIGKILL)
    await proc.wait()


async def _kill_when_started(starting: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """After a cancel during start-up: wait for the process to exist, then kill its group."""
    try:
        proc = await starting
    except Exception:  # noqa: BLE001 — the start failed, so there is nothing to kill (the start reports it)
        return
    await _kill_group(proc)


async def _settle(tasks: list[asyncio.Task[None]], seconds: float) -> None:
    """Give the pipe readers a moment to see EOF, then stop whatever is left."""
    _, pending = await asyncio.wait(tasks, timeout=seconds)
    for task in pending:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class Bash(AgentTool):
    """Run a shell command with bash and return its exit code, stdout and stderr.

    The command runs in `working_dir` (relative to the workspace) or in the workspace, with
    no stdin (commands that wait for input get end-of-file). Each of stdout and stderr is
    cut to about 30,000 characters, keeping the start and the end around a marker. After
    `timeout_seconds` the command and every process it started are killed and the result
    has `"timed_out": true`. Background jobs that keep stdout/stderr open make the call
    wait for them; to leave something running, redirect its output (`cmd > log 2>&1 &`).
    Prefer read_file/write_file/edit_file over shell tricks for file contents.
    """

    name: ClassVar[str] = "bash"

    command: str = Field(description="The shell command line to run (bash syntax).")
    working_dir: str | None = Field(
        default=None,
        description="Folder to run in (absolute, or relative to workspace); default workspace.",
    )
    timeout_seconds: float = Field(
        default=30, gt=0, le=3600, description="Kill the command after this many seconds."
    )

    async def execute(self, ctx: ToolContext) -> JsonObject:
        """Start the command and wait for it without ever blocking the event loop."""
        cwd = ctx.resolve(self.working_dir) if self.working_dir else ctx.workspace
        if not cwd.is_dir():
            return tool_error(f"working_dir is not an existing folder: {cwd}")
        if not self.command.strip():
            return tool_error("command is empty")
        env = tool_environment(PAGER="cat", GIT_PAGER="cat")
        starting = asyncio.ensure_future(
            asyncio.create_subprocess_shell(
                self.command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
                executable=shutil.which("bash") or "/bin/sh",
            )
        )
        try:
            # Shielded: cancelled while asyncio is still wiring the pipes, the command may
            # already run; asyncio's own cleanup would kill only the shell, not its children.
            proc = await asyncio.shield(starting)
        except asyncio.CancelledError:
            await _kill_when_started(starting)
            raise
        except OSError as exc:
            return tool_error(f"could not start the command: {exc}")
        return await _supervise(proc, self.timeout_seconds)


async def _supervise(proc: asyncio.subprocess.Process, limit_seconds: float) -> JsonObject:
    """Collect output until the command ends, times out, or the task is cancelled."""
    head, tail = OUTPUT_LIMIT_CHARS * 3, OUTPUT_LIMIT_CHARS
    out, err = CappedBuffer(head, tail), CappedBuffer(head, tail)
    readers = [
        asyncio.create_task(_pump(proc.stdout, out)),
        asyncio.create_task(_pump(proc.stderr, err)),
    ]

    async def finish() -> None:
        await asyncio.wait(readers)  # unlike gather, cancelling this leaves the readers alone
        await proc.wait()

    waiter = asyncio.create_task(finish())
    timed_out = False
    try:
        done, _ = await asyncio.wait([waiter], timeout=limit_seconds)
        if not done:
            timed_out = True
            waiter.cancel()
            await _kill_group(proc)
            await _settle(readers, _DRAIN_SECONDS)
    except asyncio.CancelledError:
        waiter.cancel()
        try:
            await _kill_group(proc)
        finally:
            for task in readers:
                task.cancel()
        log.info("bash command cancelled; process group %s killed", proc.pid)
        raise
    result: JsonObject = {
        "exit_code": proc.returncode,
        "stdout": out.text(OUTPUT_LIMIT_CHARS),
        "stderr": err.text(OUTPUT_LIMIT_CHARS),
    }
    if timed_out:
        result["timed_out"] = True
    return result

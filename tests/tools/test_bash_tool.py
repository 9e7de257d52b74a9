"""The bash tool with real subprocesses: output, limits, timeouts, cancellation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.tools.base import ToolContext
from koroku_desktop.tools.builtin_bash import OUTPUT_LIMIT_CHARS, Bash
from koroku_desktop.tools.registry import ToolRegistry


async def bash(ctx: ToolContext, command: str, **kw: Any) -> dict[str, Any]:
    return await Bash(command=command, **kw).execute(ctx)


def _live_members(pgid: int) -> list[int]:
    """Pids of processes in group `pgid` that are still running (zombies count as dead)."""
    alive = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            raw = stat_file.read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may contain spaces, so split after ')'
        fields = raw[raw.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state not in ("Z", "X"):
            alive.append(int(stat_file.parent.name))
    return alive


def _pid_alive(pid: int) -> bool:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return raw[raw.rindex(")") + 2 :].split()[0] not in ("Z", "X")


async def _group_gone(pgid: int) -> bool:
    """Whether group `pgid` has no running member, allowing the kernel a moment to finish
    delivering SIGKILL (kill() returns before the target is dead)."""
    for _ in range(500):
        if not _live_members(pgid):
            return True
        await asyncio.sleep(0.01)
    return False


async def _dead(pid: int) -> bool:
    """Whether `pid` has stopped running, allowing the kernel a moment as above."""
    for _ in range(500):
        if not _pid_alive(pid):
            return True
        await asyncio.sleep(0.01)
    return False


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


async def _wait_for_lines(path: Path, lines: int = 1) -> str:
    """The file's text once it has `lines` words (pids); polls without blocking the loop."""
    for _ in range(3000):
        text = await asyncio.to_thread(_read, path)
        if len(text.split()) >= lines:
            return text
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never got {lines} lines")


async def test_exit_code_stdout_stderr(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo out; echo err >&2; exit 3")
    assert result == {"exit_code": 3, "stdout": "out\n", "stderr": "err\n"}


async def test_runs_with_bash_in_workspace_by_default(ctx: ToolContext) -> None:
    result = await bash(ctx, 'pwd; echo "${BASH_VERSION:+bash}"')
    assert result["stdout"].splitlines() == [str(ctx.workspace), "bash"]


async def test_working_dir_relative_to_workspace(ctx: ToolContext) -> None:
    (ctx.workspace / "sub").mkdir()
    result = await bash(ctx, "pwd", working_dir="sub")
    assert result["stdout"].strip() == str(ctx.workspace / "sub")


async def test_missing_working_dir_is_an_error(ctx: ToolContext) -> None:
    result = await bash(ctx, "pwd", working_dir="nowhere")
    assert "working_dir" in result["error"]


async def test_stdin_is_closed(ctx: ToolContext) -> None:
    result = await bash(ctx, "cat; echo done")
    assert result["stdout"] == "done\n"


async def test_long_output_is_truncated_with_marker(ctx: ToolContext) -> None:
    result = await bash(ctx, "seq 1 20000; echo THE-END")  # ~108,000 characters
    out = result["stdout"]
    assert "[... truncated: showing the first" in out
    assert out.startswith("1\n2\n3\n")
    assert out.rstrip().endswith("THE-END")
    assert len(out) < OUTPUT_LIMIT_CHARS + 200
    assert result["exit_code"] == 0


async def test_stderr_is_truncated_separately(ctx: ToolContext) -> None:
    result = await bash(ctx, "seq 1 20000 >&2; echo fine")
    assert "truncated" in result["stderr"]
    assert result["stdout"] == "fine\n"


async def test_huge_output_is_bounded_in_memory(ctx: ToolContext) -> None:
    result = await bash(ctx, "head -c 20000000 /dev/zero | tr '\\0' a; echo; echo LAST")
    out = result["stdout"]
    assert "characters of 20000006 bytes" in out
    assert out.rstrip().endswith("LAST")
    assert len(out) < OUTPUT_LIMIT_CHARS + 200


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext) -> None:
    pid_file = ctx.workspace / "pids"
    result = await bash(
        ctx,
        f"sleep 60 & echo $! > {pid_file}; echo $$ >> {pid_file}; sleep 60",
        timeout_seconds=1,
    )
    assert result["timed_out"] is True
    assert result["exit_code"] != 0
    background, shell = (int(x) for x in pid_file.read_text().split())
    assert await _dead(background)
    assert await _group_gone(shell)


async def test_timeout_keeps_output_printed_before(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo started; sleep 60", timeout_seconds=1)
    assert result["timed_out"] is True
    assert result["stdout"] == "started\n"


async def test_timeout_kills_children_that_ignore_sigterm(ctx: ToolContext) -> None:
    pid_file = ctx.workspace / "pid"
    command = f"bash -c 'trap \"\" TERM; echo $$ > {pid_file}; sleep 60; sleep 60' ; sleep 60"
    result = await bash(ctx, command, timeout_seconds=1)
    assert result["timed_out"] is True
    assert await _dead(int(pid_file.read_text()))


async def test_cancellation_kills_the_group_and_reraises(ctx: ToolContext) -> None:
    pid_file = ctx.workspace / "pids"
    task = asyncio.create_task(
        bash(ctx, f"sleep 60 & echo $! > {pid_file}; echo $$ >> {pid_file}; sleep 60")
    )
    text = await _wait_for_lines(pid_file, 2)
    background, shell = (int(x) for x in text.split())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _dead(background)
    assert await _group_gone(shell)


async def test_cancellation_propagates_through_registry(ctx: ToolContext) -> None:
    pid_file = ctx.workspace / "pid"
    registry = ToolRegistry(None)
    task = asyncio.create_task(
        registry.run("bash", {"command": f"echo $$ > {pid_file}; sleep 60"}, ctx)
    )
    shell = int(await _wait_for_lines(pid_file))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _group_gone(shell)


@pytest.mark.parametrize("loop_turns", [0, 1, 2, 3, 5, 8])
async def test_cancellation_during_start_up_leaves_nothing_running(
    ctx: ToolContext, loop_turns: int
) -> None:
    pid_file = ctx.workspace / "pid"
    task = asyncio.create_task(bash(ctx, f"echo $$ > {pid_file}; sleep 60 & sleep 60"))
    for _ in range(loop_turns):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    text = _read(pid_file).strip()
    if text:
        assert await _group_gone(int(text))


async def test_event_loop_keeps_ticking_during_a_command(ctx: ToolContext) -> None:
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.05)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    before = ticks
    result = await bash(ctx, "sleep 2; echo done")
    stop.set()
    await ticking
    assert result["stdout"] == "done\n"
    assert ticks > before


async def test_timed_out_call_is_not_ok_in_registry(ctx: ToolContext) -> None:
    response, ok = await ToolRegistry(None).run(
        "bash", {"command": "sleep 60", "timeout_seconds": 0.5}, ctx
    )
    assert response["timed_out"] is True
    assert ok is False


async def test_failing_command_is_still_ok_as_a_call(ctx: ToolContext) -> None:
    response, ok = await ToolRegistry(None).run("bash", {"command": "false"}, ctx)
    assert response["exit_code"] == 1
    assert ok is True


async def test_timeout_must_be_positive(ctx: ToolContext) -> None:
    response, ok = await ToolRegistry(None).run(
        "bash", {"command": "true", "timeout_seconds": 0}, ctx
    )
    assert "timeout_seconds" in response["error"]
    assert ok is False

"""The terminal's keyboard outside `koroku chat`'s prompt: the approval question's answer and
Ctrl-C while a turn runs.

The answer is read on the event loop, never in a worker thread: a thread blocked reading the
terminal cannot be stopped, so after a Ctrl-C it went on waiting, ate the next line typed at
the prompt and held the process's exit until Enter was pressed. Waiting with the loop's
reader instead, a cancelled wait leaves nothing reading the terminal.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TextIO

LINE_BYTES = 4096
"""The most one answer reads (a terminal line in canonical mode comes whole)."""


async def read_terminal_line(prompt: str, out: TextIO) -> str | None:
    """The line typed after `prompt`: on stdin when it is a terminal (the prompt on `out`),
    else on the controlling terminal. '' at the end of input; None with no terminal at all.
    Cancelled, it stops reading at once."""
    if sys.stdin is not None and sys.stdin.isatty():
        out.write(prompt)
        out.flush()
        return await _line(sys.stdin.fileno())
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None
    try:
        os.write(tty, prompt.encode())
        return await _line(tty)
    except OSError:
        return None
    finally:
        os.close(tty)


async def _line(fd: int) -> str:
    """What the terminal `fd` gives once a line (or the end of input) is there."""
    await wait_readable(fd)
    try:
        return os.read(fd, LINE_BYTES).decode(errors="replace")
    except OSError:
        return ""


async def wait_readable(fd: int) -> None:
    """Until `fd` (a terminal or a pipe) has something to read, waiting on the loop's reader,
    so a cancel ends the wait at once. A regular file returns at once: it never waits."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, readable)
    except (PermissionError, ValueError):  # epoll refuses regular files (and bad fds)
        return
    try:
        await ready
    finally:
        loop.remove_reader(fd)


@contextmanager
def ctrl_c_stops(stop: Callable[[], object]) -> Iterator[None]:
    """While inside: the first Ctrl-C calls `stop` on the running loop (`koroku chat`: the
    turn ends and the prompt comes back); another does what Ctrl-C did before (chat: leave),
    so a turn slow to stop never traps anyone. Outside the main thread it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    before = signal.getsignal(signal.SIGINT)
    pressed = 0

    def on_ctrl_c(signum: int, frame: FrameType | None) -> None:
        nonlocal pressed
        pressed += 1
        if pressed == 1:
            loop.call_soon_threadsafe(stop)
        elif callable(before):
            before(signum, frame)
        elif before != signal.SIG_IGN:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)

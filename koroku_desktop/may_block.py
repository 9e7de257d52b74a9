"""`may_block`: the marker for a blocking call that may wait for long, and the one place such
calls run.

The core hands its small blocking calls (the log, the lease, a file) to `asyncio.to_thread`;
`koroku ask`'s loop runs those inline (cli/one_shot.py), so a call there that waits for
another process or for a person would freeze the loop: no timeout, no cancel, no Ctrl-C.
A call that may wait for long (another process's memory-files sync, the OS keyring's unlock
dialog) is handed to `may_block` instead, which runs it in a worker thread of its own on
every loop, with the caller's context variables, as `asyncio.to_thread` does. It sits at the
top of the package (like `fsutil.py`) so that every layer may mark such a call.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar, TypeVarTuple, Unpack

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


@functools.cache
def _threads() -> ThreadPoolExecutor:
    """The worker threads of every `may_block` call (made on first use, never the loop's)."""
    return ThreadPoolExecutor(8, thread_name_prefix="koroku-may-block")


def may_block(call: Callable[[Unpack[Ts]], T], *args: *Ts) -> asyncio.Future[T]:
    """`call(*args)` in a worker thread, on any loop (`koroku ask`'s too): await the future."""
    loop = asyncio.get_running_loop()
    run = functools.partial(contextvars.copy_context().run, call, *args)
    return loop.run_in_executor(_threads(), run)

"""`koroku ask`'s event loop: a one-shot command runs the core's small blocking calls inline.

The core hands every blocking call (the log's reads and appends, the turn lease, the facts,
the memory files' sync, the embedder's store) to `asyncio.to_thread`, so that the desktop
app's UI thread never waits for the disk. A one-shot terminal command has no UI to keep
responsive, and there each hand-off is pure waiting: a worker thread is woken, then the loop
again (two waits for a free core on a busy machine, ~20 hand-offs in an `ask`), and each
worker thread opens its own SQLite connection. `OneShotLoop` runs what `to_thread` hands it
(`run_in_executor(None, ...)`) at once on the loop's own thread instead: the same calls in
the same order, each still a whole unit between two awaits, so the lease and the turn lock
behave as before (the lease's heartbeat keeps its own thread).

What may wait for long still goes to a thread: name resolution (a DNS lookup can hang, and
the SDK's timeouts must still fire meanwhile), and a call handed an executor of its own: the
core marks each call that may wait for another process or a person with `may_block`
(koroku_desktop/may_block.py: the wait for another process's memory-files sync, the OS
keyring). A new such call must be marked so, or it freezes `ask`. The approval question
waits for a person on the loop itself, with the loop's reader (`cli/keyboard.py`).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from typing import Any, TypeVar, TypeVarTuple, Unpack

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

_OFF_LOOP: tuple[object, ...] = (socket.getaddrinfo, socket.getnameinfo)
"""What the loop itself hands to the default executor and may block for long."""


def _is_debug_lookup(func: object) -> bool:
    """The loop's own name lookup in debug mode (a logging wrapper of `socket.getaddrinfo`)."""
    return _DEBUG_LOOKUP is not None and getattr(func, "__func__", None) is _DEBUG_LOOKUP


_DEBUG_LOOKUP = getattr(asyncio.BaseEventLoop, "_getaddrinfo_debug", None)


class OneShotLoop(asyncio.SelectorEventLoop):
    """An event loop whose default executor is the loop's own thread (see the module)."""

    def run_in_executor(
        self, executor: Executor | None, func: Callable[[Unpack[Ts]], T], *args: *Ts
    ) -> asyncio.Future[T]:
        if executor is not None or func in _OFF_LOOP or _is_debug_lookup(func):
            return super().run_in_executor(executor, func, *args)
        self._check_closed()  # type: ignore[attr-defined]  # as the base class does
        future: asyncio.Future[T] = self.create_future()
        try:
            future.set_result(func(*args))
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001 — handed back, as a worker thread does
            future.set_exception(exc)
        return future


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on a `OneShotLoop` (the same Ctrl-C handling and shutdown)."""
    with asyncio.Runner(loop_factory=OneShotLoop) as runner:
        return runner.run(main)

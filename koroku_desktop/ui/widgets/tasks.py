"""TaskSet: the asyncio tasks a window starts, kept alive until they end.

The event loop holds only weak references to tasks, so a task nobody keeps may be collected
mid-flight. Every window that starts work off its slots keeps it here (one copy of that rule).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class TaskSet:
    """Tasks started by one owner; each is dropped from the set when it is done."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Future[Any]] = set()

    def start(self, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        """Schedule `coro` on the running loop and keep it until it ends."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def cancel(self) -> None:
        """Cancel the tasks still running and wait until they have ended."""
        running = [t for t in self._tasks if not t.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=5)

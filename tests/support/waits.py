"""Waiting for conditions instead of fixed sleeps, and the `settle` barrier of the Qt tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

DEFAULT_TIMEOUT_S = 30.0
"""Generous: a condition that holds returns at once; only a failing test waits this long."""


def wait_until(
    condition: Callable[[], object],
    timeout: float = DEFAULT_TIMEOUT_S,
    *,
    interval: float = 0.02,
    message: str | Callable[[], str] = "the condition never held",
) -> None:
    """Poll `condition` (a thread's, a file's or a subprocess's state) until it is true.

    Raises AssertionError with `message` (a string or a callable of the last state) after
    `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(message() if callable(message) else message)
        time.sleep(interval)


async def async_wait_until(
    condition: Callable[[], object],
    seconds: float = DEFAULT_TIMEOUT_S,
    *,
    interval: float = 0.01,
    message: str | Callable[[], str] = "the condition never held",
) -> None:
    """`wait_until` on a running asyncio loop: polls without blocking the loop."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(message() if callable(message) else message)
        await asyncio.sleep(interval)


async def drain(rounds: int = 20) -> None:
    """Let every callback already due on the running asyncio loop run (and what they schedule,
    `rounds` levels deep); nothing waits on a clock."""
    for _ in range(rounds):
        await asyncio.sleep(0)


def settle(rounds: int = 5) -> None:
    """The Qt barrier: deliver posted events, deferred deletes and zero-delay timers (which is
    how the qasync loop runs asyncio's ready callbacks), `rounds` times over.

    Use it where a test needs "everything already queued has happened" (before a screenshot,
    after a `deleteLater`), never as a wait for something that takes time.
    """
    from PySide6.QtCore import QCoreApplication, QEvent, QEventLoop

    app = QCoreApplication.instance()
    if app is None:
        return
    for _ in range(rounds):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents)

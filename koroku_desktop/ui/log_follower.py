"""LogFollower: while the app is open, what other processes (a terminal's `koroku`, another
app) append to the log shows up here, within a second.

Every `FOLLOW_INTERVAL_MS` a worker thread asks the log's data version (one PRAGMA); only
when it changed does the agent read the events after the last seq it saw, and its hooks
bring them to the bridge's `event_appended` like our own. Split out of the bridge, which
only starts and stops it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from koroku_desktop.agent.loop import Agent

log = logging.getLogger(__name__)

FOLLOW_INTERVAL_MS = 250


class LogFollower(QObject):
    """Polls the log's data version on a timer and has the agent catch up when it changed."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._agent: Agent | None = None
        self._data_version: Callable[[], int] | None = None
        self._last_version: int | None = None
        self._checking = False
        self._task: asyncio.Future[int] | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(FOLLOW_INTERVAL_MS)
        self._timer.timeout.connect(self._tick)

    def start(self, agent: Agent, data_version: Callable[[], int]) -> None:
        """Poll `data_version` and have `agent` catch up when it changed (again after `stop`)."""
        self._agent, self._data_version = agent, data_version
        self._timer.start()

    def stop(self) -> None:
        """Stop polling."""
        self._timer.stop()

    async def settle(self) -> None:
        """Let a check under way end (for at most five seconds)."""
        if self._task is not None and not self._task.done():
            await asyncio.wait([self._task], timeout=5)

    def _tick(self) -> None:
        if self._checking or self._data_version is None or self._agent is None:
            return
        self._checking = True
        self._task = asyncio.ensure_future(self.check_log())

    async def check_log(self) -> int:
        """One follow step: fold what others appended if the log changed; how many events."""
        try:
            if self._data_version is None or self._agent is None:
                return 0
            version = await asyncio.to_thread(self._data_version)
            if version == self._last_version:
                return 0
            self._last_version = version
            return len(await self._agent.catch_up())
        except Exception:  # following must never take the app down
            log.warning("could not follow the log", exc_info=True)
            return 0
        finally:
            self._checking = False

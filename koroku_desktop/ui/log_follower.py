"""LogFollower: while the app is open, what other processes (a terminal's `koroku`, another
app) append to the log shows up here, within a moment.

The follower is woken by the file system, not by a clock: a `QFileSystemWatcher` (inotify on
Linux) watches the database and its write-ahead log, which every commit by any process
writes to. On a change a worker thread asks the log's data version (one PRAGMA); only when it
changed does the agent read the events after the last seq it saw, and its hooks bring them to
the bridge's `event_appended` like our own. An idle app therefore wakes up for nothing.

Where the files cannot be watched (an in-memory log, a file system without notifications)
the follower polls the data version every `FOLLOW_INTERVAL_MS` instead. Split out of the
bridge, which only starts and stops it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from koroku_desktop.agent.loop import Agent

log = logging.getLogger(__name__)

FOLLOW_INTERVAL_MS = 250
"""The poll's period where the log's files cannot be watched."""
COALESCE_MS = 15
"""A commit touches the files several times in a row: one check for the burst."""
SETTLE_S = 2.0
"""How long the quit lets a check under way end before cancelling it (the next start reads
what it had not)."""


class LogFollower(QObject):
    """Has the agent catch up when another process changed the log (see the module doc)."""

    log_changed = Signal()
    """Another process changed the log (the conversation list reads it again)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._agent: Callable[[], Agent] | None = None
        self._data_version: Callable[[], int] | None = None
        self._last_version: int | None = None
        self._checking = False
        self._again = False  # a change came while a check ran: check once more after it
        self._task: asyncio.Future[int] | None = None
        self._files: list[str] = []
        self._watcher: QFileSystemWatcher | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COALESCE_MS)
        self._timer.timeout.connect(self._tick)

    @property
    def watching(self) -> bool:
        """True when file notifications wake the follower (False: it polls)."""
        return self._watcher is not None and bool(self._watcher.files())

    def start(
        self,
        agent: Callable[[], Agent],
        data_version: Callable[[], int],
        files: Sequence[Path] = (),
    ) -> None:
        """Follow the log behind `data_version`, woken by changes to `files` (the database
        and its `-wal`), for the agent `agent()` names (the conversation shown); with no
        file that can be watched, poll instead."""
        self._agent, self._data_version = agent, data_version
        self._files = [str(path) for path in files]
        if self._files and self._watch():
            self._changed()  # what came between the first load and the watch
            return
        self._timer.setSingleShot(False)
        self._timer.setInterval(FOLLOW_INTERVAL_MS)
        self._timer.start()

    def stop(self) -> None:
        """Stop following (a notification already queued wakes nothing)."""
        self._agent = None
        self._timer.stop()
        if self._watcher is not None:
            self._watcher.deleteLater()
            self._watcher = None

    async def settle(self) -> None:
        """Let a check under way end (for at most `SETTLE_S`, then cancel it: a catch-up
        waiting for another process's memory files sync must not hold the quit)."""
        if self._task is not None and not self._task.done():
            await asyncio.wait([self._task], timeout=SETTLE_S)
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.wait([self._task])

    # -- waking up ---------------------------------------------------------------------

    def _watch(self) -> bool:
        """Watch the files that exist and their folder (a `-wal` made later is added then)."""
        watcher = QFileSystemWatcher(self)
        folders = sorted({str(Path(name).parent) for name in self._files})
        if not all(watcher.addPath(folder) for folder in folders):
            watcher.deleteLater()
            return False
        self._watcher = watcher
        watcher.fileChanged.connect(self._changed)
        watcher.directoryChanged.connect(self._folder_changed)
        self._add_files()
        if not watcher.files():
            self.stop()
            return False
        return True

    def _add_files(self) -> None:
        if self._watcher is None:
            return
        watched = set(self._watcher.files())
        for name in self._files:
            if name not in watched and Path(name).exists():
                self._watcher.addPath(name)

    def _folder_changed(self, _folder: str) -> None:
        """A file was made or removed beside the log (its `-wal` came back): watch it again."""
        self._add_files()
        self._changed()

    def _changed(self, _name: str = "") -> None:
        if self._agent is None:
            return
        if self._watcher is not None and _name and _name not in self._watcher.files():
            self._add_files()  # replaced by a new file: the watch went with the old one
        if not self._timer.isActive():
            self._timer.start()

    def _tick(self) -> None:
        if self._data_version is None or self._agent is None:
            return
        if self._checking:
            self._again = True
            return
        self._checking = True
        self._task = asyncio.ensure_future(self.check_log())

    # -- catching up -------------------------------------------------------------------

    async def check_log(self) -> int:
        """One follow step: fold what others appended if the log changed; how many events."""
        try:
            agent = self._agent
            if self._data_version is None or agent is None:
                return 0
            version = await asyncio.to_thread(self._data_version)
            if version == self._last_version or self._agent is None:  # (or stopped since)
                return 0
            self._last_version = version
            self.log_changed.emit()
            return len(await agent().catch_up())
        except Exception:  # following must never take the app down
            log.warning("could not follow the log", exc_info=True)
            return 0
        finally:
            self._checking = False
            if self._again:
                self._again = False
                self._changed()

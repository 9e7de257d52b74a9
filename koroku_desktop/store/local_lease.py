"""SqliteTurnLock: the per-conversation writer lease, a row in `turn_leases` of the log's file.

Why a lease row and not an OS file lock: a row says who holds the turn (front end, host, pid,
turn id) so a waiting front end can tell the user, it survives being read by any process on
the file, and its shape (owner + heartbeat + expiry) is exactly what a PostgreSQL hub needs
later (an advisory lock plus the same row for display), so the agent's `TurnLock` port stays
the same when sync arrives. An OS lock would be freed by the kernel on a crash, but it cannot
cross machines and tells nothing about its holder.

Taking it: a read first (no write lock while someone else holds it), then `BEGIN IMMEDIATE`
re-reads and writes the row, so two takers cannot both win. The holder renews `expires_at`
every `heartbeat` seconds from a daemon thread (one for all the keys an instance holds,
started with its first lease without waiting for it to run, and asleep while it holds
none); a lease not renewed within `ttl` is free.
A holder on this host whose pid is gone (SIGKILL) is free at once.
"""

from __future__ import annotations

import _thread
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.store.data_dir import DataDir, data_dir_for, release
from koroku_desktop.store.database import Connection, KorokuDatabase

log = logging.getLogger(__name__)

LEASE_TTL_S = 10.0
HEARTBEAT_S = 2.0

_SELECT = (
    "SELECT owner, front_end, host, pid, turn_id, expires_at FROM turn_leases"
    " WHERE conversation_id = ?"
)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this machine."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SqliteTurnLock:
    """The `TurnLock` on the SQLite log file (table `turn_leases`, created by m005)."""

    def __init__(
        self,
        path: Path,
        front_end: str,
        *,
        ttl: float = LEASE_TTL_S,
        heartbeat: float = HEARTBEAT_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.front_end = front_end
        self.owner = new_id()
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.ttl = ttl
        self.heartbeat = heartbeat
        self.clock = clock
        self._dir: DataDir | None = None
        self._conn_lock = threading.Lock()
        self._beats: dict[str, threading.Event] = {}
        """The keys held here, each with the event that stops renewing it."""
        self._beat_cv = threading.Condition()
        self._beating = False
        self._idle = False
        """The heartbeat thread waits for a first key (a new key wakes it; otherwise it is
        left to its period, so a lease taken during a turn costs it no wake-up)."""
        self._closed = False

    # -- the connection ---------------------------------------------------------------------

    def _shared(self) -> KorokuDatabase:
        """The data dir's one database (store/database.py), shared with its event log."""
        if self._dir is None:
            self._dir = data_dir_for(self.path)
        return self._dir.database

    def _db(self) -> Connection:
        return self._shared().conn()

    def close(self) -> None:
        """Release every lease this instance holds and let go of the database."""
        for conversation_id in list(self._beats):
            self.release(conversation_id)
        with self._beat_cv:
            self._closed = True
            self._beat_cv.notify()
        with self._conn_lock:
            if self._dir is not None:
                release(self._dir)
                self._dir = None

    # -- the lease -------------------------------------------------------------------------

    def _live_holder(self, row: tuple[object, ...] | None) -> LockHolder | None:
        """The holder a row names if it still holds the lease (not expired, not dead)."""
        if row is None:
            return None
        owner, front_end, host, pid, turn_id, expires_at = row
        try:
            pid_number, expiry = int(str(pid)), float(str(expires_at))
        except ValueError:  # a damaged lease row holds nothing: the next taker replaces it
            log.warning("ignoring a damaged turn lease row: %r", row)
            return None
        holder = LockHolder(str(owner), str(front_end), str(host), pid_number, str(turn_id), expiry)
        if holder.owner == self.owner or holder.expires_at <= self.clock():
            return None
        if holder.host == self.host and not pid_alive(holder.pid):
            return None
        return holder

    def holder(self, conversation_id: str) -> LockHolder | None:
        """Who holds the lease now (None: free, expired, or held by this instance)."""
        with self._conn_lock:
            row = self._db().execute(_SELECT, (conversation_id,)).fetchone()
        return self._live_holder(row)

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None:
        """Take the lease (None) or return its live holder; see the module docstring."""
        with self._conn_lock:
            db = self._db()
            busy = self._live_holder(db.execute(_SELECT, (conversation_id,)).fetchone())
            if busy is not None:
                return busy
            with self._shared().atomic("IMMEDIATE"):
                busy = self._live_holder(db.execute(_SELECT, (conversation_id,)).fetchone())
                if busy is None:
                    now = self.clock()
                    db.execute(
                        "INSERT OR REPLACE INTO turn_leases (conversation_id, owner, front_end,"
                        " host, pid, turn_id, acquired_at, expires_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            conversation_id,
                            self.owner,
                            self.front_end,
                            self.host,
                            self.pid,
                            turn_id,
                            now,
                            now + self.ttl,
                        ),
                    )
        if busy is None:
            self._start_heartbeat(conversation_id)
        return busy

    def release(self, conversation_id: str) -> None:
        """Stop renewing and delete the lease row if it is still ours."""
        stop = self._beats.pop(conversation_id, None)
        if stop is not None:
            stop.set()
        with self._conn_lock:
            self._db().execute(
                "DELETE FROM turn_leases WHERE conversation_id = ? AND owner = ?",
                (conversation_id, self.owner),
            )

    def _renew(self, conversation_id: str) -> bool:
        with self._conn_lock:
            if self._dir is None:  # closed since the heartbeat read what is held: none is
                return False
            cursor = self._db().execute(
                "UPDATE turn_leases SET expires_at = ? WHERE conversation_id = ? AND owner = ?",
                (self.clock() + self.ttl, conversation_id, self.owner),
            )
        return cursor.rowcount > 0

    def _start_heartbeat(self, conversation_id: str) -> None:
        with self._beat_cv:
            self._closed = False  # (taken again after `close`: renewed again)
            old = self._beats.get(conversation_id)
            if old is not None:
                old.set()
            self._beats[conversation_id] = threading.Event()
            if self._idle:
                self._beat_cv.notify()
            if not self._beating:
                # A bare daemon thread: `threading.Thread.start` waits until the new thread
                # has run, a wait for a free core on a busy machine that the taker (the
                # event loop's thread, in `koroku ask`) need not make.
                _thread.start_new_thread(self._beat, ())
                self._beating = True

    def _held(self) -> list[tuple[str, threading.Event]]:
        return [(key, stop) for key, stop in list(self._beats.items()) if not stop.is_set()]

    def _beat(self) -> None:
        """Renew every held lease each `heartbeat` seconds; asleep while none is held."""
        while True:
            with self._beat_cv:
                while not self._closed and not self._held():
                    self._idle = True
                    self._beat_cv.wait()
                self._idle = False
                if not self._closed:
                    self._beat_cv.wait(self.heartbeat)
                if self._closed:
                    self._beating = False
                    return
            for conversation_id, stop in self._held():
                try:
                    if not self._renew(conversation_id) and not stop.is_set():
                        log.warning("the turn lease of %r was taken over", conversation_id)
                        stop.set()
                except Exception:  # any: the one heartbeat of every key held here must go on
                    log.warning("could not renew the turn lease; retrying", exc_info=True)

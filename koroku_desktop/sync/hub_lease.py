"""HubTurnLock: the turn lease across devices, a PostgreSQL advisory lock per conversation.

Composed with the local lease (store/local_lease.py): the local lease first (processes on this
machine), then `pg_try_advisory_lock` on a connection held for this purpose, so two devices
do not run turns in one conversation at the same moment. The hub frees the lock by itself if
the holder's connection dies. Offline (the hub unreachable or sync off-line), it falls back
to the local lease alone: working offline never waits on the hub. With no hub (`address`
None: sync off) it is the local lease; `retarget` switches hubs while the app runs.

Who holds it: the holder writes a row in `koroku.turn_holders` (front end, host, pid, turn
id) on the connection that holds the lock, and deletes it on release. A waiter believes the
row only while the backend that wrote it still holds the lock (`pg_locks`): the advisory
lock dies with its session, a row left by a dead session does not, and a waiter that cannot
read a live row says "another device" without a pid.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.sync.config import HubAddress
from koroku_desktop.sync.deadline import answer_within, close_quietly
from koroku_desktop.sync.hub import HubError
from koroku_desktop.sync.hub_schema import migrate

if TYPE_CHECKING:  # psycopg is imported where a hub is reached: a start without sync skips it
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 2
ANSWER_S = 5.0
"""At most this long for the hub to answer a lock call (a turn never waits longer on a silent
hub: it falls back to the local lease, as offline)."""


class LocalLease(Protocol):
    """The local `TurnLock` this composes with (its identity goes into the hub's row)."""

    owner: str
    front_end: str
    host: str
    pid: int

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None: ...

    def release(self, conversation_id: str) -> None: ...

    def close(self) -> None: ...


def lock_key(conversation_id: str) -> int:
    """The advisory lock key (a signed 64-bit number) of a conversation's turns."""
    digest = hashlib.sha256(f"koroku-turn:{conversation_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


_WRITE_HOLDER = (
    "INSERT INTO koroku.turn_holders (lock_key, conversation_id, owner, front_end, host, pid,"
    " turn_id, backend_pid) VALUES (%s, %s, %s, %s, %s, %s, %s, pg_backend_pid())"
    " ON CONFLICT (lock_key) DO UPDATE SET conversation_id = excluded.conversation_id,"
    " owner = excluded.owner, front_end = excluded.front_end, host = excluded.host,"
    " pid = excluded.pid, turn_id = excluded.turn_id, backend_pid = excluded.backend_pid,"
    " since = now()"
)
_CLEAR_HOLDER = (
    "DELETE FROM koroku.turn_holders WHERE lock_key = %s AND backend_pid = pg_backend_pid()"
)
# A bigint advisory key shows in pg_locks as classid (high 32 bits), objid (low), objsubid 1.
_READ_HOLDER = (
    "SELECT h.owner, h.front_end, h.host, h.pid, h.turn_id"
    " FROM koroku.turn_holders h JOIN pg_locks l ON l.pid = h.backend_pid"
    " WHERE h.lock_key = %s AND l.locktype = 'advisory' AND l.granted"
    " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid AND l.objsubid = 1"
)


def unknown_holder() -> LockHolder:
    """The holder when the hub's row cannot be read: another device, nothing more known."""
    return LockHolder("hub", "another device", "", 0, "", time.time(), remote=True)


class HubTurnLock:
    """The `TurnLock` port: local lease + hub advisory lock (see the module docstring)."""

    def __init__(
        self,
        local: LocalLease,
        address: HubAddress | None,
        online: Callable[[], bool] = lambda: True,
    ) -> None:
        self.local = local
        self.address = address
        self.online = online
        self._conn: Conn | None = None
        self._held: set[str] = set()
        self._lock = threading.Lock()

    def retarget(self, address: HubAddress | None, online: Callable[[], bool]) -> None:
        """Use another hub (None: none) from the next acquire on. A hub lock held now goes
        with the old connection; its turn keeps the local lease until it is released."""
        with self._lock:
            self._drop()
            self.address, self.online = address, online

    def _connection(self) -> Conn:
        import psycopg

        assert self.address is not None, "no hub to connect to"
        if self._conn is None or self._conn.closed:
            info = self.address.conninfo() + f" connect_timeout={CONNECT_TIMEOUT_S}"
            self._conn = psycopg.connect(info, autocommit=True)
            with self._answer("setting up the hub's tables", self._conn):
                migrate(self._conn)  # the holder table may be newer than this hub
        return self._conn

    def _answer(self, waiting_for: str, conn: Conn) -> contextlib.AbstractContextManager[None]:
        bound = min(ANSWER_S, self.address.answer_s if self.address else ANSWER_S)
        return answer_within(conn, bound, waiting_for)

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None:
        """The local lease, then the hub's lock (noting who holds it); the holder when
        either is taken."""
        busy = self.local.try_acquire(conversation_id, turn_id)
        if busy is not None or not self.online():
            return busy
        key = lock_key(conversation_id)
        with self._lock:
            if self.address is None:  # sync is off: the local lease is the lock
                return None
            import psycopg

            try:
                conn = self._connection()
                with self._answer("taking the turn lock on the hub", conn):
                    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
                    if row is not None and row[0]:
                        self._held.add(conversation_id)
                        me = self.local
                        who = (me.owner, me.front_end, me.host, me.pid, turn_id)
                        conn.execute(_WRITE_HOLDER, (key, conversation_id, *who))
                        return None
                    holder = read_holder(conn, key)
            except (psycopg.Error, HubError) as exc:  # its own connection, and the bound
                log.info("hub unreachable, turn lock is local only: %s", exc)
                self._drop()
                return None
        self.local.release(conversation_id)
        return holder

    def release(self, conversation_id: str) -> None:
        """Give back the hub's lock (if held, its holder row first) and the local lease."""
        with self._lock:
            if conversation_id in self._held:
                import psycopg

                self._held.discard(conversation_id)
                key = lock_key(conversation_id)
                try:
                    conn = self._connection()
                    with self._answer("giving back the turn lock on the hub", conn):
                        conn.execute(_CLEAR_HOLDER, (key,))
                        conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                except (psycopg.Error, HubError):
                    self._drop()  # the lock went with the connection
        self.local.release(conversation_id)

    def holder(self, conversation_id: str) -> LockHolder | None:
        """The local holder (another device's shows when taking the lock fails)."""
        holder: Callable[[str], LockHolder | None] | None = getattr(self.local, "holder", None)
        return holder(conversation_id) if holder else None

    def _drop(self) -> None:
        close_quietly(self._conn)
        self._conn = None
        self._held.clear()

    def close(self) -> None:
        """Release everything and close the hub connection."""
        with self._lock:
            self._drop()
        self.local.close()


def read_holder(conn: Conn, key: int) -> LockHolder:
    """Who holds `key` by the hub's row, believed only while the backend that wrote it holds
    the lock (see the module docstring); otherwise `unknown_holder()`."""
    high, low = (key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF
    row = conn.execute(_READ_HOLDER, (key, high, low)).fetchone()
    if row is None:
        return unknown_holder()
    owner, front_end, host, pid, turn_id = row
    # No expiry: the hub's lock lasts as long as its holder's session.
    return LockHolder(
        str(owner), str(front_end), str(host), int(str(pid)), str(turn_id), time.time(), remote=True
    )

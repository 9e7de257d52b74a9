"""HubTurnLock: the turn lease across devices, a PostgreSQL advisory lock per conversation.

Composed with the local lease (store/turn_lock.py): the local lease first (processes on this
machine), then `pg_try_advisory_lock` on a connection held for this purpose, so two devices
do not run turns in one conversation at the same moment. The hub frees the lock by itself if
the holder's connection dies. Offline (the hub unreachable or sync off-line), it falls back
to the local lease alone: working offline never waits on the hub.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

import psycopg

from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.sync.config import HubAddress
from koroku_desktop.sync.hub import HubError

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 2


class LocalLease(Protocol):
    """The local `TurnLock` this composes with."""

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None: ...

    def release(self, conversation_id: str) -> None: ...

    def close(self) -> None: ...


def lock_key(conversation_id: str) -> int:
    """The advisory lock key (a signed 64-bit number) of a conversation's turns."""
    digest = hashlib.sha256(f"koroku-turn:{conversation_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class HubTurnLock:
    """The `TurnLock` port: local lease + hub advisory lock (see the module docstring)."""

    def __init__(
        self,
        local: LocalLease,
        address: HubAddress,
        online: Callable[[], bool] = lambda: True,
    ) -> None:
        self.local = local
        self.address = address
        self.online = online
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._held: set[str] = set()
        self._lock = threading.Lock()

    def _connection(self) -> psycopg.Connection[tuple[object, ...]]:
        if self._conn is None or self._conn.closed:
            info = self.address.conninfo() + f" connect_timeout={CONNECT_TIMEOUT_S}"
            self._conn = psycopg.connect(info, autocommit=True)
        return self._conn

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None:
        """The local lease, then the hub's lock; the holder when either is taken."""
        busy = self.local.try_acquire(conversation_id, turn_id)
        if busy is not None or not self.online():
            return busy
        with self._lock:
            try:
                row = (
                    self._connection()
                    .execute("SELECT pg_try_advisory_lock(%s)", (lock_key(conversation_id),))
                    .fetchone()
                )
            except HubError as exc:
                log.info("hub unreachable, turn lock is local only: %s", exc)
                self._drop()
                return None
            if row is not None and row[0]:
                self._held.add(conversation_id)
                return None
        self.local.release(conversation_id)
        return LockHolder("hub", "another device", self.address.display(), 0, "", time.time())

    def release(self, conversation_id: str) -> None:
        """Give back the hub's lock (if held) and the local lease."""
        with self._lock:
            if conversation_id in self._held:
                self._held.discard(conversation_id)
                try:
                    self._connection().execute(
                        "SELECT pg_advisory_unlock(%s)", (lock_key(conversation_id),)
                    )
                except HubError:
                    self._drop()  # the lock went with the connection
        self.local.release(conversation_id)

    def holder(self, conversation_id: str) -> LockHolder | None:
        """The local holder (the hub's lock has no readable holder)."""
        holder: Callable[[str], LockHolder | None] | None = getattr(self.local, "holder", None)
        return holder(conversation_id) if holder else None

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._held.clear()

    def close(self) -> None:
        """Release everything and close the hub connection."""
        with self._lock:
            self._drop()
        self.local.close()

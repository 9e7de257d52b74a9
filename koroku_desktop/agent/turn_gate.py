"""Taking a conversation's turn lease from the event loop, and reading what others appended.

Every blocking call (the lease's SQL, the log read) runs in a worker thread; waiting is a
poll with `asyncio.sleep`, so the UI thread never blocks on another process's turn.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from koroku_desktop.agent.ports import EventLog, TurnLock
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.events import LogEntry, StoredEvent
from koroku_desktop.domain.lease import LockHolder

POLL_S = 0.1
"""How often a waiting front end tries the lease again."""
CATCH_UP_PAGE = 1000


class TurnBusyError(RefusedError, RuntimeError):
    """Another front end holds the conversation's turn and we were told not to wait."""

    def __init__(self, holder: LockHolder) -> None:
        super().__init__(f"a turn is running in {holder.where()}")
        self.holder = holder


async def acquire_lease(
    lock: TurnLock,
    conversation_id: str,
    turn_id: str,
    *,
    wait: bool,
    on_wait: Callable[[LockHolder], object],
    poll: float = POLL_S,
) -> None:
    """Take the lease, waiting (and calling `on_wait` once per holder) while another holds it.

    Raises `TurnBusyError` when `wait` is False and the lease is held. A cancel while the
    worker thread is taking the lease gives it back, so no lease outlives its waiter.
    """
    told: str | None = None
    while True:
        taking = asyncio.to_thread(lock.try_acquire, conversation_id, turn_id)
        attempt = asyncio.ensure_future(taking)
        try:
            holder = await asyncio.shield(attempt)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                if await attempt is None:
                    await asyncio.to_thread(lock.release, conversation_id)
            raise
        if holder is None:
            return
        if not wait:
            raise TurnBusyError(holder)
        if told != holder.owner:
            told = holder.owner
            on_wait(holder)
        await asyncio.sleep(poll)


def read_after(log: EventLog, conversation_id: str, after_seq: int) -> list[LogEntry]:
    """Every entry of the conversation after `after_seq`, in pages (blocking: off the loop)."""
    entries: list[LogEntry] = []
    while True:
        page = log.entries(conversation_id, after_seq=after_seq, limit=CATCH_UP_PAGE)
        entries.extend(page)
        if len(page) < CATCH_UP_PAGE:
            return entries
        after_seq = page[-1].seq


class TurnGate:
    """One conversation's way in for turns: this process's FIFO lock, then the lease.

    It also remembers the highest seq seen here (read or written, damaged rows included),
    so catching up reads only what is new and never folds an event twice.
    """

    def __init__(
        self,
        log: EventLog,
        conversation_id: str,
        lease: TurnLock | None,
        on_wait: Callable[[LockHolder], object],
    ) -> None:
        self.log = log
        self.conversation_id = conversation_id
        self.lease = lease
        self.on_wait = on_wait
        self.local = asyncio.Lock()  # FIFO: turns wait in the order they were asked for
        self.seen_seq = 0
        self.turn_id: str | None = None
        self.turns = 0
        """Turns (and clears) running or waiting in this process."""

    @contextlib.asynccontextmanager
    async def hold(self, *, wait: bool, turn_id: str, counted: bool) -> AsyncIterator[str]:
        """Hold the local lock and the lease for one turn; `turn_id` is current meanwhile.

        `counted` adds it to `turns` from the moment it starts waiting.
        """
        self.turns += counted
        try:
            async with self.local:
                lease = self.lease
                if lease is not None:
                    await acquire_lease(
                        lease, self.conversation_id, turn_id, wait=wait, on_wait=self.on_wait
                    )
                try:
                    self.turn_id = turn_id
                    yield turn_id
                finally:
                    self.turn_id = None
                    if lease is not None:
                        await asyncio.to_thread(lease.release, self.conversation_id)
        finally:
            self.turns -= counted

    def saw(self, seq: int) -> None:
        """Note a seq read or written here."""
        self.seen_seq = max(self.seen_seq, seq)

    async def read_new(self) -> list[StoredEvent]:
        """The conversation's events after the last seq seen, read off the loop; marks them
        seen (a racing second read gets nothing twice)."""
        entries = await asyncio.to_thread(read_after, self.log, self.conversation_id, self.seen_seq)
        new: list[StoredEvent] = []
        for entry in entries:
            if entry.seq <= self.seen_seq:
                continue
            self.seen_seq = entry.seq
            if isinstance(entry, StoredEvent):
                new.append(entry)
        return new

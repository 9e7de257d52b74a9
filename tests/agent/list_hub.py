"""ListHub: the order a sync hub hands out, without PostgreSQL, for tests of what two devices
project after syncing (tests/sync drives the real hub, PostgreSQL, through the real engine).

It does what the hub and `SyncEngine` do to the order: a device pulls every event it lacks,
at the hub's positions, then pushes its own unsynced whole turns, which go after everything
in the hub. The local side is the real `SqliteSyncLedger`.
"""

from __future__ import annotations

from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.sync_ledger import SqliteSyncLedger


class ListHub:
    """Every event once, in the order pushed (position = index + 1)."""

    def __init__(self) -> None:
        self.events: list[StoredEvent] = []

    def sync(self, *logs: SqliteEventLog) -> None:
        """Sync each log in turn: pull, then push."""
        for log in logs:
            ledger = SqliteSyncLedger(log)
            try:
                start = ledger.pulled_position()
                new = self.events[start:]
                ledger.merge_pulled(new, list(range(start + 1, start + 1 + len(new))))
                ledger.restate_old_compactions()
                turns, _running = ledger.pending_turns()
                for turn in turns:
                    positions = []
                    for event in ledger.events_of(turn.seqs):
                        self.events.append(event)
                        positions.append((event.event_id, len(self.events)))
                    ledger.record_pushed(positions)
            finally:
                ledger.close()

    def both_ways(self, a: SqliteEventLog, b: SqliteEventLog) -> None:
        """A syncs, B syncs, A syncs again: both hold everything, in the hub's order."""
        self.sync(a, b, a)

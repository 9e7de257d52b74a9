"""SyncEngine: one sync = pull everything new, push whole turns, push blobs.

Crash-safe at any point: pulled events are merged with their hub position in one local
transaction (a re-delivery is a no-op); a push commits on the hub first and records the
positions locally after; if the process dies in between, the next sync's pull brings those
events back and records their positions on the rows already here. A push is refused when
the hub moved (`HubMovedError`): the engine pulls again and retries, so a device's pushed
turns always come after everything it has pulled.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from koroku_desktop.domain.events import SCHEMA_VERSION, StoredEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.upcasting import upcast
from koroku_desktop.sync.hub import HubEvent, HubMismatchError, HubMovedError, PostgresHub
from koroku_desktop.sync.ports import LocalBlobs, LocalLedger, PendingTurnLike

log = logging.getLogger(__name__)

BATCH_EVENTS = 2000
"""Events per push transaction (whole turns only; a longer turn goes alone) and per pull page."""
MAX_RETRIES = 20
LAST_SUCCESS_EVERY_S = 60.0
PAUSE_ENV = "KOROKU_SYNC_TEST_PAUSE"
"""Test hook: `push:<file>` or `pull:<file>` makes the first push (after the hub committed,
before the positions are recorded here) or the first pull page touch <file> and sleep, so a
test can SIGKILL the process at the worst moment. Unset in real use."""


@dataclass
class SyncReport:
    """What one sync did."""

    pulled: int = 0
    pushed: int = 0
    pushed_turns: int = 0
    held_turns: int = 0
    blobs_pushed: int = 0
    migrated: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for a person."""
        text = (
            f"pulled {self.pulled} events, pushed {self.pushed} events"
            f" in {self.pushed_turns} turns, {self.blobs_pushed} attachments"
        )
        if self.held_turns:
            text += f"; {self.held_turns} running turns wait for the next sync"
        return text


def _pause(stage: str) -> None:
    """The test hook of PAUSE_ENV (see there)."""
    wanted = os.environ.get(PAUSE_ENV, "")
    if wanted.startswith(f"{stage}:"):
        Path(wanted.split(":", 1)[1]).touch()
        time.sleep(3600)


def to_hub(event: StoredEvent) -> HubEvent:
    """The hub row of a local event."""
    payload = event.event.model_dump_json(exclude_none=True)
    return HubEvent(
        event.event_id,
        event.conversation_id,
        event.turn_id,
        event.writer,
        event.event.kind,
        SCHEMA_VERSION,
        payload,
        event.created_at,
    )


def from_hub(row: HubEvent) -> StoredEvent | None:
    """The local event of a hub row (None, logged, when this version cannot read it)."""
    try:
        event = upcast(row.kind, json.loads(row.payload))
    except Exception as exc:  # noqa: BLE001 — a newer Koroku's event: leave it on the hub
        log.warning("cannot read hub event %s (%s): %s", row.hub_seq, row.kind, exc)
        return None
    return StoredEvent(
        0, row.conversation_id, row.created_at, event, row.event_id, row.turn_id, row.writer
    )


@dataclass(eq=False)
class SyncEngine:
    """Push and pull between one local log and one hub (blocking: run off the UI thread)."""

    ledger: LocalLedger
    hub: PostgresHub
    blobs: LocalBlobs | None = None
    _: KW_ONLY
    batch: int = BATCH_EVENTS
    _on_hub: set[str] = field(init=False, default_factory=set)

    def check_hub(self) -> None:
        """Connect, migrate the hub, and make sure it is the hub this log synced with."""
        self.hub.connect()
        hub_id = self.hub.hub_id()
        known = self.ledger.state("hub_id")
        if known is None:
            self.ledger.set_state("hub_id", hub_id)
        elif known != hub_id:
            raise HubMismatchError(
                f"this data dir synced with another hub ({known[:8]}…, now {hub_id[:8]}…);"
                " use a fresh data dir to sync with a new hub"
            )

    def sync_once(self) -> SyncReport:
        """Pull, push, push blobs; record the success. Raises on hub errors (retry later)."""
        report = SyncReport()
        self.check_hub()
        report.migrated = list(self.hub.migrated)
        report.pulled += self.pull()
        self.ledger.restate_old_compactions()  # seqs mean nothing on another device
        for _ in range(MAX_RETRIES):
            try:
                self._push(report)
                break
            except HubMovedError:
                report.pulled += self.pull()
        else:
            raise HubMovedError("the hub kept moving; try again")
        report.blobs_pushed = self.push_blobs()
        self.hub.seen_device(socket.gethostname())
        # A sync that changed nothing writes nothing either (at most once a minute), so the
        # app's follower, which syncs when the local file changes, settles.
        last = float(self.ledger.state("last_success") or 0)
        if report.pulled or report.pushed or time.time() - last > LAST_SUCCESS_EVERY_S:
            self.ledger.set_state("last_success", str(time.time()))
        return report

    def pull(self) -> int:
        """Merge every hub event after this device's position, page by page; how many new."""
        new = 0
        while True:
            rows = self.hub.fetch_after(self.ledger.pulled_position(), self.batch)
            if not rows:
                return new
            pairs = [(e, r.hub_seq) for r in rows if (e := from_hub(r)) is not None]
            new += self.ledger.merge_pulled([e for e, _ in pairs], [h for _, h in pairs])
            _pause("pull")
            if len(rows) < self.batch:
                return new

    def _batches(self, turns: Sequence[PendingTurnLike]) -> list[list[PendingTurnLike]]:
        batches: list[list[PendingTurnLike]] = []
        size = 0
        for turn in turns:
            if not batches or size + len(turn.seqs) > self.batch:
                batches.append([])
                size = 0
            batches[-1].append(turn)
            size += len(turn.seqs)
        return batches

    def _push(self, report: SyncReport) -> None:
        turns, report.held_turns = self.ledger.pending_turns()
        for batch in self._batches(turns):
            events = self.ledger.events_of([s for turn in batch for s in turn.seqs])
            if not events:
                continue
            positions = self.hub.push(self.ledger.pulled_position(), [to_hub(e) for e in events])
            _pause("push")
            self.ledger.record_pushed(positions)
            report.pushed += len(events)
            report.pushed_turns += len(batch)

    def push_blobs(self) -> int:
        """Copy to the hub every attachment held here that it lacks."""
        if self.blobs is None:
            return 0
        shas = [sha for sha in self.blobs.shas() if sha not in self._on_hub]
        pushed = 0
        for start in range(0, len(shas), 500):
            chunk = shas[start : start + 500]
            for sha in sorted(self.hub.missing_blobs(chunk)):
                self.hub.put_blob(sha, self.blobs.read(sha))
                pushed += 1
            self._on_hub.update(chunk)  # asked once per run: blobs never change
        return pushed


def device_id(ledger: LocalLedger) -> str:
    """This data dir's device id on hubs (made once, kept in the ledger)."""
    known = ledger.state("device_id")
    if known is None:
        known = new_id()
        ledger.set_state("device_id", known)
    return known

"""AgentBridge: the only seam between Qt and the agent.

Agent hooks become Qt signals; widgets' intents arrive as async slots. The bridge is also the
agent's `Approver`: it emits `approval_requested` and awaits the future an approval card
resolves, so approvals are inline and never modal (approvals.py). It follows the log while the
app is open (`follow`, log_follower.py): what another process appends shows up through
`event_appended` like our own. Turns are told apart by turn id, never by their text.

The signals speak for the conversation shown; other conversations' turns go on unseen and
show again when their conversation is (bridge_lanes.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Slot
from qasync import asyncSlot

from koroku_desktop.agent.dismissal import dismiss_remembered
from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.supersede import SupersedeError
from koroku_desktop.app.runtime import DB_ERRORS, AttachmentStore
from koroku_desktop.domain.attachment import PendingAttachment
from koroku_desktop.domain.events import LogEntry
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.ui.bridge_lanes import LaneSignals
from koroku_desktop.ui.bridge_lanes import PageReader as PageReader
from koroku_desktop.ui.log_follower import LogFollower
from koroku_desktop.ui.turn_lanes import Lane, QueuedTurn

log = logging.getLogger(__name__)


_DISMISS_ERRORS: tuple[type[Exception], ...] = (ValueError, *DB_ERRORS)
"""A dismissal refused (a stale passage) or not written (the database)."""


class AgentBridge(LaneSignals):
    """Signals for everything the agent does; async slots for everything the user asks."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._follower = LogFollower(self)
        self._follower.log_changed.connect(self.log_changed)
        self.attachments: AttachmentStore | None = None
        """Koroku's copies of attached files (the runtime's; the app sets it)."""

    # -- reading -----------------------------------------------------------------------

    async def load_history(self, before_seq: int | None = None, limit: int = 500) -> list[LogEntry]:
        """A page of the conversation's log, read off the event loop.

        It does not wait for the agent's live context (which may be long to fold on a big
        uncompacted log): the window fills first, `agent.load()` follows.
        """
        if self._read_page is None:
            return []
        return await asyncio.to_thread(self._read_page, before_seq, limit)

    def emit_meter(self) -> None:
        """Emit the context meter now (ui/live_loads.py reads the live context first)."""
        self._on_meter(self.agent.context_meter())

    # -- intents -----------------------------------------------------------------------

    async def _run(
        self,
        lane: Lane,
        text: str | None,
        turn_id: str,
        quick: bool = False,
        attached: Sequence[PendingAttachment] = (),
        replacing: str | None = None,
    ) -> TurnResult | None:
        try:
            parts = await asyncio.to_thread(self._keep, attached) if attached else []
            return await lane.agent.run_turn(
                text, turn_id=turn_id, quick=quick, attachments=parts, replacing=replacing
            )
        except SupersedeError as exc:
            self.supersede_failed.emit(str(exc))
            return None
        except asyncio.CancelledError:
            if lane.dequeue(turn_id) and self._shows(lane):
                self._emit_queue()
            raise
        except Exception as exc:  # the loop must survive any bug in a turn
            log.exception("turn failed")
            lane.last_error = f"{type(exc).__name__}: {exc}"
            if self._shows(lane):
                self.error.emit(lane.last_error)
            return None

    def _turn_ended(self, lane: Lane) -> None:
        """A turn's task is done (also one cancelled before it ever ran: removed from the
        queue), so it no longer counts as busy."""
        lane.active -= 1
        if lane.active == 0:
            self._set_waiting(lane, "")
            if self._shows(lane):
                self.busy_changed.emit(False)
            self.activity_changed.emit()
            self.lane_idle(lane.agent)

    lane_idle: Callable[[Agent], object] = staticmethod(lambda _agent: None)
    """Told when an agent has no turn left here (the pool may let it go)."""

    def _keep(self, attached: Sequence[PendingAttachment]) -> list[AttachmentPart]:
        """Store the attached files in the blob store (in a worker thread)."""
        store = self.attachments
        if store is None:
            raise RuntimeError("attachments cannot be stored: no blob store is wired")
        return [store.keep(p) for p in attached]

    def _start(
        self,
        text: str | None,
        turn_id: str | None,
        quick: bool = False,
        attached: Sequence[PendingAttachment] = (),
        replacing: str | None = None,
    ) -> asyncio.Task[TurnResult | None]:
        """Book the turn now (busy, queue) in the conversation shown and run it as a task."""
        lane = self._lane()
        turn_id = turn_id or new_id()
        entry = None
        if text is not None:
            entry = QueuedTurn(turn_id, text or "Attached: " + ", ".join(p.name for p in attached))
        if lane.book(entry):
            self._emit_queue()
        if lane.active == 1:
            self.busy_changed.emit(True)
            self.activity_changed.emit()
        task: asyncio.Task[TurnResult | None] = asyncio.ensure_future(
            self._run(lane, text, turn_id, quick, attached, replacing)
        )
        lane.track(turn_id, task)
        task.add_done_callback(lambda _t: self._turn_ended(lane))
        return task

    @Slot(str)
    def send(
        self,
        text: str,
        turn_id: str | None = None,
        quick: bool = False,
        attachments: Sequence[PendingAttachment] = (),
    ) -> asyncio.Task[TurnResult | None] | None:
        """Send a message (an async slot: returns the turn's task at once).

        While a turn runs (here or in another front end) the message is queued, shown as
        queued, and sent in order. `turn_id` (default: a new one) is what its events carry.
        `quick` (quick-ask) runs it at the quick thinking level. `attachments` (checked
        files) are stored in the blob store off the loop and go with the message.
        """
        text = text.strip()
        if not text and not attachments:
            return None
        return self._start(text, turn_id, quick, attachments)

    @Slot()
    def retry(self) -> asyncio.Task[TurnResult | None]:
        """Retry the failed turn (its message is already in the log); returns its task."""
        return self._start(None, None)

    def replace_last(
        self, turn_id: str, text: str | None = None
    ) -> asyncio.Task[TurnResult | None] | None:
        """Replace the last turn `turn_id` (see agent/supersede.py): a new answer to its
        message when `text` is None, else a turn sending `text` (the edited message)."""
        if text is not None and not text.strip():
            return None
        return self._start(None if text is None else text.strip(), None, replacing=turn_id)

    @asyncSlot()  # type: ignore[untyped-decorator]
    async def cancel(self) -> None:
        """Cancel the shown conversation's running turn; queued messages still follow.
        Other conversations' turns go on."""
        agent = self.agent
        self._approvals.abandon_all(agent)
        agent.cancel()

    @asyncSlot()  # type: ignore[untyped-decorator]
    async def clear(self) -> None:
        """Append a `cleared` event (after the window asked for confirmation)."""
        await self.agent.clear()
        self.cleared.emit()

    @asyncSlot(int, int)  # type: ignore[untyped-decorator]
    async def dismiss_remembered(self, passage_seq: int, surfaced_seq: int) -> None:
        """Record that a remembered passage was not relevant (the chip greys when it lands)."""
        try:
            await dismiss_remembered(self.agent, passage_seq, surfaced_seq)
        except _DISMISS_ERRORS as exc:
            self.error.emit(f"Could not dismiss the remembered passage: {exc}")

    # -- following the log -------------------------------------------------------------

    def follow(self, data_version: Callable[[], int], files: Sequence[Path] = ()) -> None:
        """Show what other processes append while the app is open, woken by changes to the
        log's `files` (see log_follower.py)."""
        self._follower.start(lambda: self.agent, data_version, files)

    @property
    def follows_by_notification(self) -> bool:
        """True when file-change notifications, not a poll, wake the log follower."""
        return self._follower.watching

    def stop_following(self) -> None:
        """Stop the follow timer (on quit)."""
        self._follower.stop()

    async def shutdown(self) -> None:
        """Cancel every conversation's running turn and queued ones, and wait until the log
        is consistent."""
        self.stop_following()
        await self._follower.settle()
        self._approvals.abandon_all()
        tasks = [task for lane in list(self._lanes.values()) for task in lane.stop()]
        if tasks:
            await asyncio.wait(tasks, timeout=5)

"""AgentBridge: the only seam between Qt and the agent.

Agent hooks become Qt signals; widgets' intents arrive as async slots. The bridge is also the
agent's `Approver`: it emits `approval_requested` and awaits the future an approval card
resolves, so approvals are inline and never modal (approvals.py). It follows the log while the
app is open (`follow`, log_follower.py): what another process appends shows up through
`event_appended` like our own. Turns are told apart by turn id, never by their text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from qasync import asyncSlot

from koroku_desktop.agent.dismissal import dismiss_remembered
from koroku_desktop.agent.hooks import ContextMeter, TurnResult
from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.agent.supersede import SupersedeError
from koroku_desktop.app.runtime import DB_ERRORS, AttachmentStore
from koroku_desktop.domain.attachment import PendingAttachment
from koroku_desktop.domain.events import CompactionEvent, LogEntry, StoredEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.ui.approvals import ApprovalDesk, PendingApproval
from koroku_desktop.ui.delta_batch import DeltaBatch
from koroku_desktop.ui.log_follower import LogFollower

log = logging.getLogger(__name__)

PageReader = Callable[[int | None, int], list[LogEntry]]
"""Reads up to `limit` log entries before a seq (None: the newest), in seq order."""


@dataclass(frozen=True)
class QueuedTurn:
    """A message waiting for its turn, known by the id its events will carry."""

    turn_id: str
    text: str


_DISMISS_ERRORS: tuple[type[Exception], ...] = (ValueError, *DB_ERRORS)
"""A dismissal refused (a stale passage) or not written (the database)."""


class AgentBridge(QObject):
    """Signals for everything the agent does; async slots for everything the user asks."""

    event_appended = Signal(object)  # StoredEvent
    text_delta = Signal(str)
    tool_started = Signal(object)  # FunctionCallPart
    tool_finished = Signal(object, object)  # call, response part (`part.failed` says ✓ or ✗)
    approval_requested = Signal(object)  # PendingApproval
    approval_closed = Signal(object)  # PendingApproval (answered or abandoned)
    turn_started = Signal(object)  # str | None
    turn_finished = Signal(object)  # TurnResult
    error = Signal(str)
    compaction_done = Signal(object)  # CompactionEvent
    context_meter = Signal(int, int)  # used, threshold
    context_cache_note = Signal(str)  # how much of the last request came from the cache
    status = Signal(str)  # a passing status text (e.g. the progress of a long compaction)
    queue_changed = Signal(list)  # texts waiting for their turn
    busy_changed = Signal(bool)
    cleared = Signal()
    waiting_changed = Signal(str)  # "waiting for the turn running in the terminal", or ""
    retrying = Signal(int, int, str)  # attempt, attempts, reason: a request is tried again
    supersede_failed = Signal(str)  # why a regenerate or an edit could not replace its turn
    sync_status = Signal(str)  # "Sync: up to date", "Sync: offline since 14:02" (any thread)
    history_reordered = Signal()  # events were placed before shown ones (a sync, anywhere)
    log_changed = Signal()  # another process wrote to the log (any conversation)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._agent: Agent | None = None
        self._read_page: PageReader | None = None
        self._queued: list[QueuedTurn] = []
        self._tasks: list[asyncio.Task[Any]] = []
        self._turn_tasks: dict[str, asyncio.Task[Any]] = {}
        self._active = 0
        self._approvals = ApprovalDesk(self.approval_requested.emit, self.approval_closed.emit)
        self.last_error: str | None = None
        self._deltas = DeltaBatch(self.text_delta.emit, self)
        self.waiting_text = ""
        self._follower = LogFollower(self)
        self._follower.log_changed.connect(self.log_changed)
        self._head: QueuedTurn | None = None
        """The message whose turn is next (running or waiting for the lease)."""
        self.attachments: AttachmentStore | None = None
        """Koroku's copies of attached files (the runtime's; the app sets it)."""

    # -- wiring ------------------------------------------------------------------------

    def attach(self, agent: Agent, read_page: PageReader) -> None:
        """Subscribe to the agent's hooks (called once by the composition root)."""
        self._agent = agent
        self._read_page = read_page
        hooks = agent.hooks
        hooks.on_event_appended.append(self._on_event)
        hooks.on_text_delta.append(self._deltas.add)
        hooks.on_tool_call.append(self.tool_started.emit)
        hooks.on_tool_result.append(self.tool_finished.emit)
        hooks.on_turn_started.append(self._on_turn_started)
        hooks.on_turn_finished.append(self._on_turn_finished)
        hooks.on_context_meter.append(self._on_meter)
        hooks.on_turn_waiting.append(self._on_waiting)
        hooks.on_retry.append(self.retrying.emit)
        hooks.on_reordered.append(self.history_reordered.emit)

    @property
    def agent(self) -> Agent:
        """The attached agent."""
        if self._agent is None:
            raise RuntimeError("AgentBridge.attach() has not run")
        return self._agent

    @property
    def busy(self) -> bool:
        """True while a turn runs or waits."""
        return self._active > 0

    @property
    def queued(self) -> list[str]:
        """Messages sent during a turn, waiting in order."""
        return [q.text for q in self._queued]

    @property
    def queued_turns(self) -> list[QueuedTurn]:
        """The waiting messages with their turn ids (to remove or edit one)."""
        return list(self._queued)

    def unqueue(self, turn_id: str) -> str | None:
        """Take a waiting message out of the queue before its turn starts (nothing of it is
        written); its text, or None when it is no longer waiting."""
        entry = next((q for q in self._queued if q.turn_id == turn_id), None)
        task = self._turn_tasks.get(turn_id)
        if entry is None or task is None or task.done():
            return None
        self._dequeue(turn_id)
        if self._head is entry:
            self._head = None
        task.cancel()
        return entry.text

    def _emit_queue(self) -> None:
        self.queue_changed.emit(self.queued)

    def _dequeue(self, turn_id: str | None) -> None:
        kept = [q for q in self._queued if q.turn_id != turn_id]
        if len(kept) != len(self._queued):
            self._queued = kept
            self._emit_queue()

    @property
    def pending_approvals(self) -> list[PendingApproval]:
        """Approvals not answered yet."""
        return self._approvals.pending

    def _on_event(self, stored: StoredEvent) -> None:
        self._deltas.flush()
        self.event_appended.emit(stored)
        if isinstance(stored.event, CompactionEvent):
            self.compaction_done.emit(stored.event)

    def _on_turn_started(self, text: str | None) -> None:
        turn_id = self.agent.current_turn_id
        self._dequeue(turn_id)
        self._head = None
        self._set_waiting("")
        self.last_error = None
        self.turn_started.emit(text)

    def _on_waiting(self, holder: LockHolder) -> None:
        """Another front end's turn runs: our next message waits, shown as queued."""
        head = self._head
        if head is not None and head not in self._queued:
            self._queued.insert(0, head)
            self._emit_queue()
        self._set_waiting(f"waiting for the turn running in {holder.location()}")

    def _set_waiting(self, text: str) -> None:
        if text != self.waiting_text:
            self.waiting_text = text
            self.waiting_changed.emit(text)

    def _on_turn_finished(self, result: TurnResult) -> None:
        self._deltas.flush()
        if result.error is not None:
            self.last_error = result.error.message
            self.error.emit(result.error.message)
        self.turn_finished.emit(result)

    def compaction_progress(self, done: int, total: int) -> None:
        """Show the progress of a compaction that takes several requests."""
        if total > 1:
            self.status.emit(f"Compacting a long history: part {done} of {total}…")

    def _on_meter(self, meter: ContextMeter) -> None:
        self.context_meter.emit(meter.used_tokens, meter.threshold_tokens)
        self.context_cache_note.emit(meter.cache_note())

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
        """Emit the context meter now (after `load_live`)."""
        self._on_meter(self.agent.context_meter())

    async def load_live(self) -> None:
        """Build the agent's live context (read off the loop) and emit the meter."""
        await self.agent.load()
        self.emit_meter()

    # -- intents -----------------------------------------------------------------------

    async def _run(
        self,
        text: str | None,
        turn_id: str,
        quick: bool = False,
        attached: Sequence[PendingAttachment] = (),
        replacing: str | None = None,
    ) -> TurnResult | None:
        try:
            parts = await asyncio.to_thread(self._keep, attached) if attached else []
            return await self.agent.run_turn(
                text, turn_id=turn_id, quick=quick, attachments=parts, replacing=replacing
            )
        except SupersedeError as exc:
            self.supersede_failed.emit(str(exc))
            return None
        except asyncio.CancelledError:
            self._dequeue(turn_id)
            raise
        except Exception as exc:  # the loop must survive any bug in a turn
            log.exception("turn failed")
            self.last_error = f"{type(exc).__name__}: {exc}"
            self.error.emit(self.last_error)
            return None

    def _turn_ended(self, _task: asyncio.Task[Any]) -> None:
        """A turn's task is done (also one cancelled before it ever ran: removed from the
        queue), so it no longer counts as busy."""
        self._active -= 1
        if self._active == 0:
            self._set_waiting("")
            self.busy_changed.emit(False)

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
        """Book the turn now (busy, queue) and run it as a task on the loop."""
        turn_id = turn_id or new_id()
        queued = self._active > 0
        self._active += 1
        if self._active == 1:
            self.busy_changed.emit(True)
        if text is not None:
            shown = text or "Attached: " + ", ".join(p.name for p in attached)
            entry = QueuedTurn(turn_id, shown)
            if queued:
                self._queued.append(entry)
                self._emit_queue()
            else:
                self._head = entry
        task: asyncio.Task[TurnResult | None] = asyncio.ensure_future(
            self._run(text, turn_id, quick, attached, replacing)
        )
        self._tasks.append(task)
        task.add_done_callback(self._tasks.remove)
        task.add_done_callback(self._turn_ended)
        self._turn_tasks[turn_id] = task
        task.add_done_callback(lambda _t: self._turn_tasks.pop(turn_id, None))
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
        """Cancel the running turn; queued messages still follow."""
        self._approvals.abandon_all()
        self.agent.cancel()

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
        self._follower.start(self.agent, data_version, files)

    @property
    def follows_by_notification(self) -> bool:
        """True when file-change notifications, not a poll, wake the log follower."""
        return self._follower.watching

    def stop_following(self) -> None:
        """Stop the follow timer (on quit)."""
        self._follower.stop()

    async def shutdown(self) -> None:
        """Cancel the running turn and queued ones, and wait until the log is consistent."""
        self.stop_following()
        await self._follower.settle()
        self._approvals.abandon_all()
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks[1:]:  # the first holds the turn lock; the rest are queued
            task.cancel()
        running = self._agent is not None and self._agent.cancel()
        if tasks and not running:
            tasks[0].cancel()  # still waiting for the lease (or catching up): just stop
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    # -- approvals ---------------------------------------------------------------------

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """The `Approver` protocol: ask through an inline card and wait for the answer."""
        return await self._approvals.ask(request)

    def answer_approval(self, pending: PendingApproval, decision: ApprovalDecision) -> None:
        """Resolve an approval (from a card); a second answer is ignored."""
        if not pending.future.done():
            pending.future.set_result(decision)

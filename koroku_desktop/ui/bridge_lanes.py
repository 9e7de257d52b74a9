"""LaneSignals: the bridge's signals, spoken for the conversation shown.

Each conversation with work under way has its own agent (app/agent_pool.py) and lane
(turn_lanes.py: queue, turn tasks, streamed text, tool, wait, failure). Every agent's hooks
come here; only the shown one's become the signals the windows follow. The others' turns go
on unseen: their events are in the log, their approvals wait (`needs_you`, a mark in the
sidebar) and `show_lane` brings a conversation's state back when it is shown again. Split
out of bridge.py, which adds the intents (send, stop...) and the log follower.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from koroku_desktop.agent.hooks import ContextMeter, TurnResult
from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.domain.events import CompactionEvent, LogEntry, StoredEvent
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.domain.parts import FunctionCallPart
from koroku_desktop.ui.approvals import ApprovalDesk, PendingApproval
from koroku_desktop.ui.delta_batch import DeltaBatch
from koroku_desktop.ui.turn_lanes import Lane, LaneApprover, QueuedTurn

PageReader = Callable[[int | None, int], list[LogEntry]]
"""Reads up to `limit` log entries before a seq (None: the newest), in seq order."""


class LaneSignals(QObject):
    """The bridge's signals, and the agents' hooks turned into them for the conversation
    shown (see the module doc)."""

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
    context_meter_pending = Signal()  # the shown agent's live context is still being read
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
    lane_shown = Signal(object)  # LaneState: the shown conversation's turn, after a switch
    activity_changed = Signal()  # a conversation's turn started or ended, or needs the person
    background_event = Signal(object)  # StoredEvent of a conversation not shown
    background_turn_finished = Signal(object)  # TurnResult of a conversation not shown

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._current: Callable[[], Agent] | None = None
        self._read_page: PageReader | None = None
        self._lanes: dict[Agent, Lane] = {}
        self._shown: Agent | None = None
        """The agent whose turns the signals speak for (None while a switch is under way)."""
        self._held: list[StoredEvent] = []
        """Events of the agent being switched to, until its page is shown (`show_lane`)."""
        self._approvals = ApprovalDesk(self._opened, self._closed)
        self._deltas = DeltaBatch(self.text_delta.emit, self)

    # -- wiring ------------------------------------------------------------------------

    def attach(
        self,
        agent: Agent,
        read_page: PageReader,
        current: Callable[[], Agent] | None = None,
    ) -> None:
        """Follow `agent` (called once by the composition root); `current` names the agent
        of the conversation shown when another may replace it (`subscribe` each new one)."""
        self._current = current or (lambda: agent)
        self._read_page = read_page
        self._shown = agent
        self.subscribe(agent)

    def subscribe(self, agent: Agent) -> None:
        """Turn `agent`'s hooks into this bridge's signals (while it is shown) and ask its
        approvals through the cards."""
        lane = self._lanes[agent] = Lane(agent)
        agent.calls.approver = LaneApprover(self._ask, agent)
        hooks = agent.hooks
        hooks.on_event_appended.append(lambda stored: self._on_event(lane, stored))
        hooks.on_text_delta.append(lambda piece: self._on_delta(lane, piece))
        hooks.on_tool_call.append(lambda call: self._on_tool(lane, call))
        hooks.on_tool_result.append(lambda call, part: self._on_tool_done(lane, call, part))
        hooks.on_turn_started.append(lambda text: self._on_turn_started(lane, text))
        hooks.on_turn_finished.append(lambda result: self._on_turn_finished(lane, result))
        hooks.on_context_meter.append(lambda meter: self._lane_meter(lane, meter))
        hooks.on_turn_waiting.append(lambda holder: self._on_waiting(lane, holder))
        hooks.on_retry.append(self.retrying.emit)
        hooks.on_reordered.append(lambda: self._reordered(lane))

    def _lane_meter(self, lane: Lane, meter: ContextMeter) -> None:
        if self._shows(lane):
            self._on_meter(meter)

    def _reordered(self, lane: Lane) -> None:
        if self._shows(lane):
            self.history_reordered.emit()

    def release(self, agent: Agent) -> None:
        """Forget a lane whose agent the pool let go (nothing of it is under way)."""
        lane = self._lanes.get(agent)
        if lane is not None and not lane.busy and agent is not self.agent:
            del self._lanes[agent]

    def in_use(self, agent: Agent) -> bool:
        """Whether a message is booked for `agent` (the pool keeps it meanwhile)."""
        lane = self._lanes.get(agent)
        return lane is not None and lane.busy

    @property
    def agent(self) -> Agent:
        """The agent of the conversation shown."""
        if self._current is None:
            raise RuntimeError("AgentBridge.attach() has not run")
        return self._current()

    def _lane(self) -> Lane:
        agent = self.agent
        lane = self._lanes.get(agent)
        if lane is None:
            self.subscribe(agent)
            lane = self._lanes[agent]
        return lane

    def _shows(self, lane: Lane) -> bool:
        return lane.agent is self._shown

    @property
    def busy(self) -> bool:
        """True while a turn runs or waits in the conversation shown."""
        return self._lane().busy

    @property
    def waiting_text(self) -> str:
        """Why the shown conversation's next turn waits ("" when it does not)."""
        return self._lane().waiting_text

    @property
    def last_error(self) -> str | None:
        """The shown conversation's last failure (None once a turn starts again)."""
        return self._lane().last_error

    @property
    def queued(self) -> list[str]:
        """Messages sent during a turn, waiting in order."""
        return [q.text for q in self._lane().queued]

    @property
    def queued_turns(self) -> list[QueuedTurn]:
        """The waiting messages with their turn ids (to remove or edit one)."""
        return list(self._lane().queued)

    def running(self) -> set[str]:
        """The conversations with a turn running, waiting or queued."""
        return {lane.conversation_id for lane in self._lanes.values() if lane.busy}

    def needs_you(self) -> set[str]:
        """The conversations whose turn waits for an approval."""
        return {
            p.owner.conversation_id for p in self._approvals.pending if isinstance(p.owner, Agent)
        }

    def unqueue(self, turn_id: str) -> str | None:
        """Take a waiting message out of the queue before its turn starts (nothing of it is
        written); its text, or None when it is no longer waiting."""
        text = self._lane().unqueue(turn_id)
        if text is not None:
            self._emit_queue()
        return text

    def _emit_queue(self) -> None:
        self.queue_changed.emit(self.queued)

    @property
    def pending_approvals(self) -> list[PendingApproval]:
        """Approvals of the conversation shown not answered yet."""
        shown = self.agent
        return [p for p in self._approvals.pending if p.owner in (None, shown)]

    # -- switching ---------------------------------------------------------------------

    def hide_lane(self) -> None:
        """The conversation shown is being left: its cards go (its approvals wait), its
        signals stop until `show_lane`."""
        self._deltas.flush()
        for pending in self.pending_approvals:
            self.approval_closed.emit(pending)
        self._shown, self._held = None, []

    def show_lane(self, after_seq: int) -> None:
        """The page of the conversation now current is shown (up to `after_seq`): show what
        its agent appended meanwhile, its turn's state, queue, wait, approvals, failure."""
        lane = self._lane()
        self._shown = lane.agent
        held, self._held = self._held, []
        for stored in held:
            if stored.seq > after_seq:
                self._on_event(lane, stored)
        self.busy_changed.emit(lane.busy)
        self._emit_queue()
        self.waiting_changed.emit(lane.waiting_text)
        self.lane_shown.emit(lane.state())
        for pending in self.pending_approvals:
            self.approval_requested.emit(pending)
        if lane.last_error is not None and not lane.running:
            self.error.emit(lane.last_error)
        self.activity_changed.emit()

    # -- the agents' hooks -------------------------------------------------------------

    def _on_event(self, lane: Lane, stored: StoredEvent) -> None:
        lane.partial = []  # what was streamed is in the log now
        if not self._shows(lane):
            if self._shown is None and lane.agent is self.agent:
                self._held.append(stored)
            self.background_event.emit(stored)
            return
        self._deltas.flush()
        self.event_appended.emit(stored)
        if isinstance(stored.event, CompactionEvent):
            self.compaction_done.emit(stored.event)

    def _on_delta(self, lane: Lane, piece: str) -> None:
        lane.partial.append(piece)
        if self._shows(lane):
            self._deltas.add(piece)

    def _on_tool(self, lane: Lane, call: FunctionCallPart) -> None:
        lane.tool = call
        if self._shows(lane):
            self.tool_started.emit(call)

    def _on_tool_done(self, lane: Lane, call: FunctionCallPart, part: object) -> None:
        lane.tool = None
        if self._shows(lane):
            self.tool_finished.emit(call, part)

    def _on_turn_started(self, lane: Lane, text: str | None) -> None:
        changed = lane.dequeue(lane.agent.current_turn_id)
        lane.started()
        self._set_waiting(lane, "")
        if self._shows(lane):
            if changed:
                self._emit_queue()
            self.turn_started.emit(text)

    def _on_waiting(self, lane: Lane, holder: LockHolder) -> None:
        """Another front end's turn runs: our next message waits, shown as queued."""
        if lane.waiting() and self._shows(lane):
            self._emit_queue()
        self._set_waiting(lane, f"waiting for the turn running in {holder.location()}")

    def _set_waiting(self, lane: Lane, text: str) -> None:
        if text != lane.waiting_text:
            lane.waiting_text = text
            if self._shows(lane):
                self.waiting_changed.emit(text)

    def _on_turn_finished(self, lane: Lane, result: TurnResult) -> None:
        lane.running, lane.partial, lane.tool = False, [], None
        if result.error is not None:
            lane.last_error = result.error.message
        if not self._shows(lane):
            self.activity_changed.emit()
            self.background_turn_finished.emit(result)
            return
        self._deltas.flush()
        if result.error is not None:
            self.error.emit(result.error.message)
        self.turn_finished.emit(result)

    def compaction_progress(self, done: int, total: int) -> None:
        """Show the progress of a compaction that takes several requests."""
        if total > 1:
            self.status.emit(f"Compacting a long history: part {done} of {total}…")

    def _on_meter(self, meter: ContextMeter) -> None:
        if not self.agent.loaded:  # an empty live context would say 0: not known yet
            self.context_meter_pending.emit()
            return
        self.context_meter.emit(meter.used_tokens, meter.threshold_tokens)
        self.context_cache_note.emit(meter.cache_note())

    # -- approvals ---------------------------------------------------------------------

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """The `Approver` protocol: ask through an inline card and wait for the answer (each
        agent subscribed asks through `_ask` instead, naming itself)."""
        return await self._approvals.ask(request)

    async def _ask(self, request: ApprovalRequest, agent: Agent) -> ApprovalDecision:
        return await self._approvals.ask(request, agent)

    def _opened(self, pending: PendingApproval) -> None:
        """A card for it now if its conversation is shown; else it waits, marked."""
        if pending.owner is None or pending.owner is self._shown:
            self.approval_requested.emit(pending)
        else:
            self.activity_changed.emit()

    def _closed(self, pending: PendingApproval) -> None:
        if pending.owner is None or pending.owner is self._shown:
            self.approval_closed.emit(pending)
        else:
            self.activity_changed.emit()

    def answer_approval(self, pending: PendingApproval, decision: ApprovalDecision) -> None:
        """Resolve an approval (from a card); a second answer is ignored."""
        if not pending.future.done():
            pending.future.set_result(decision)

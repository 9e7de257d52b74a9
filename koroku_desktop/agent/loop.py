"""The agent loop: one user turn = request, persist, run tools, persist, repeat until text.

The steps of a turn are agent/steps.py; this holds the live context, the turn lock and the
turn around them (the user message, remembered passages, a cancel)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime

from koroku_desktop.agent.context_size import estimate_tokens
from koroku_desktop.agent.cut import sendable
from koroku_desktop.agent.facts import FactBook
from koroku_desktop.agent.hooks import AgentHooks, ContextMeter, TurnResult, last_reply_usage
from koroku_desktop.agent.memories import MemorySurfacer
from koroku_desktop.agent.memory_events import write_memory
from koroku_desktop.agent.options import AgentOptions as AgentOptions  # importable from here
from koroku_desktop.agent.ports import Approver, ChatModel, EventLog, TurnLock
from koroku_desktop.agent.prompts import budget_guardrail, system_instruction
from koroku_desktop.agent.steps import run_steps
from koroku_desktop.agent.supersede import supersede
from koroku_desktop.agent.tool_calls import (  # the answers stay importable from here
    CANCELLED as CANCELLED,
)
from koroku_desktop.agent.tool_calls import DENIED as DENIED
from koroku_desktop.agent.tool_calls import OVER_BUDGET as OVER_BUDGET
from koroku_desktop.agent.tool_calls import ToolCaller
from koroku_desktop.agent.turn import TurnState
from koroku_desktop.agent.turn_endings import after_cancel
from koroku_desktop.agent.turn_gate import TurnGate
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import (
    ClearedEvent,
    Event,
    MemoryEditEvent,
    MessageEvent,
    StoredEvent,
)
from koroku_desktop.domain.facts import REMEMBER_HINT
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import AttachmentPart, Part, TextPart
from koroku_desktop.domain.remembered import Remembered, remembered_part
from koroku_desktop.domain.turn_time import time_note
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.base import RecallSearch
from koroku_desktop.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

LIVE_TAIL_LIMIT = 5_000
"""At most this many events of an uncompacted history are loaded; a compaction reads the
rest from the log (so the first turn after a big import does not wait for them)."""


AfterTurn = Callable[[TurnResult], Awaitable[object]]
"""A step run after every turn, inside the turn lock (compaction's check is one: it only
decides, and the compaction itself runs in the background, see agent/compaction.py)."""


class Agent:
    """Runs turns for one conversation over a shared event log, a model and tools.

    A turn holds the conversation's `TurnLock` (if given) and first folds what others wrote.
    """

    def __init__(
        self,
        log: EventLog,
        model: ChatModel,
        tools: ToolRegistry,
        policy: ApprovalPolicy,
        approver: Approver,
        options: AgentOptions,
        *,
        conversation_id: str = "default",
        recall: RecallSearch | None = None,
        turn_lock: TurnLock | None = None,
    ) -> None:
        self.log = log
        self.model = model
        self.tools = tools
        self.policy = policy
        self.approver = approver
        self.options = options
        self.conversation_id = conversation_id
        self.conversation_title = ""
        """How the conversation is called (the memory files' entries name it)."""
        self.hooks = AgentHooks()
        self.calls = ToolCaller(tools, policy, approver, options, self.hooks, recall)
        """Runs each step's tool calls (agent/tool_calls.py)."""
        self._view: ContextView | None = None
        self._loading: asyncio.Future[tuple[ContextView, int]] | None = None
        self._current: asyncio.Task[TurnResult] | None = None
        self.overflowing = False
        """The last request left older turns out: the history is waiting for a compaction."""
        self.after_turn: list[AfterTurn] = []
        """Async callables `f(result)` run after each turn, inside the turn lock."""
        self._gate = TurnGate(log, conversation_id, turn_lock, self.hooks.on_turn_waiting)
        self.clock: Callable[[], datetime] = datetime.now
        """When a user turn is sent (its time note); tests drive it instead of sleeping."""
        self.turn_from_seq: int | None = None
        """The first seq of the running (or last) turn: searches leave its own events out."""
        self.memories: MemorySurfacer | None = None
        """Finds past passages to attach to a new user turn (None: never)."""
        self.facts: FactBook | None = None
        """The facts about the user, refreshed from the log as each turn starts (None: none)."""
        self.facts_text = ""
        """The live facts' block as the running turn sends it (fixed for the turn)."""

    @property
    def recall(self) -> RecallSearch | None:
        """The `recall` tool's search (None: keyword search is not wired)."""
        return self.calls.recall

    @recall.setter
    def recall(self, search: RecallSearch | None) -> None:
        self.calls.recall = search

    def switch_to(self, conversation_id: str, title: str = "") -> None:
        """Run the next turns in another conversation: its own live context, lease and
        meter, loaded on the next `load()`. Refused (`RuntimeError`) while a turn runs or
        waits here; stop a background compaction first (it folds the current one)."""
        if self.busy:
            raise RuntimeError("a turn is running in this conversation")
        self.conversation_id, self.conversation_title = conversation_id, title
        self._view, self._loading, self.overflowing, self.turn_from_seq = None, None, False, None
        self._gate = TurnGate(self.log, conversation_id, self._gate.lease, self._gate.on_wait)

    # -- the live context --------------------------------------------------------------

    async def load(self) -> ContextView:
        """Build the live context from the log once, reading and parsing off the event loop."""
        if self._view is None:
            if self._loading is None:
                self._loading = asyncio.ensure_future(asyncio.to_thread(self._read_live))
            loading = self._loading
            try:
                view, seen = await asyncio.shield(loading)
            except BaseException:
                if loading.done() and self._loading is loading:  # failed: read again next time
                    self._loading = None
                raise
            if self._view is None:
                self._view = view
                self._gate.saw(seen)
        return self._view

    def _read_live(self) -> tuple[ContextView, int]:
        live = self.log.load_live(self.conversation_id, LIVE_TAIL_LIMIT)
        if live.damaged:
            log.warning("%d damaged events skipped in the live context", len(live.damaged))
        view = ContextView.from_tail(live.boundary, live.events, live.unloaded)
        return view, max([view.last_seq, *(d.seq for d in live.damaged)])

    async def catch_up(self) -> list[StoredEvent]:
        """Fold (off the loop) what others appended since the last seq seen here; return it.

        A compaction or clear among them rebuilds the view. Nothing is folded twice.
        """
        view = await self.load()
        folded = await self._gate.read_new()
        for stored in folded:
            view.apply(stored)
            self.hooks.on_event_appended(stored)
        if view.stale:  # pulled before what is folded, or another summary: from the log
            self._view, _seen = await asyncio.to_thread(self._read_live)
            if view.reordered:
                self.hooks.on_reordered()
        if any(isinstance(s.event, MemoryEditEvent) for s in folded):
            await write_memory(
                self.log, self.conversation_id, self.options.data_dir, self._gate.lease
            )
        if folded:
            self.hooks.on_context_meter(self.context_meter())
        return folded

    @property
    def turn_lock(self) -> TurnLock | None:
        """The cross-process lease turns take (compaction takes a second key on it)."""
        return self._gate.lease

    @property
    def current_turn_id(self) -> str | None:
        """The id of the turn running here (None between turns)."""
        return self._gate.turn_id

    @asynccontextmanager
    async def hold_turn(
        self, *, wait: bool = True, turn_id: str | None = None, counted: bool = False
    ) -> AsyncIterator[str]:
        """Own the conversation (local lock, then lease), caught up; yield the turn id.

        `counted` makes `busy` true meanwhile. `TurnBusyError` if held elsewhere and not `wait`.
        """
        async with self._gate.hold(wait=wait, turn_id=turn_id or new_id(), counted=counted) as turn:
            await self.catch_up()
            if self.facts is not None:  # fixed for the turn: the prefix stays byte-stable
                self.facts_text = await self.facts.block()
            yield turn

    @property
    def loaded(self) -> bool:
        """Whether the live context is built (`view` may be read)."""
        return self._view is not None

    @property
    def view(self) -> ContextView:
        """The live context (call `load()` first)."""
        if self._view is None:
            raise RuntimeError("Agent.load() has not run yet")
        return self._view

    async def append(self, events: Sequence[Event]) -> list[StoredEvent]:
        """Append to the log in a worker thread, fold into the live context, tell subscribers.

        A cancel while the write runs still waits for it and folds it (the log has it).
        """
        write = asyncio.to_thread(
            self.log.append, self.conversation_id, events, turn_id=self._gate.turn_id
        )
        pending = asyncio.ensure_future(write)
        try:
            stored = await asyncio.shield(pending)
        except asyncio.CancelledError:
            self._fold(await pending)
            raise
        self._fold(stored)
        return stored

    def _fold(self, stored: list[StoredEvent]) -> None:
        for item in stored:
            if item.seq <= self._gate.seen_seq:
                continue  # a follow step read it first and folded it already
            self._gate.saw(item.seq)
            if self._view is not None:
                self._view.apply(item)
            self.hooks.on_event_appended(item)

    @property
    def busy(self) -> bool:
        """True while a turn (or a clear) runs or waits here."""
        return self._gate.turns > 0

    # -- turns -------------------------------------------------------------------------

    async def run_turn(
        self,
        text: str | None,
        *,
        turn_id: str | None = None,
        wait: bool = True,
        quick: bool = False,
        attachments: Sequence[AttachmentPart] = (),
        replacing: str | None = None,
    ) -> TurnResult:
        """Run one user turn; `None` retries the last (failed) turn without a new message.

        `attachments` (already in the blob store) go with the message, before its text.

        Turns are serialised, in this process (FIFO) and across processes (the lease): a
        second call waits for the first to finish, or raises `TurnBusyError` if not `wait`.
        `turn_id` lets a front end know the turn's events before they exist. `quick`
        (quick-ask) uses the quick thinking level. `replacing` names the last turn, to be
        superseded first (see agent/supersede.py): `text` None regenerates it, else edits it.
        """
        async with self.hold_turn(wait=wait, turn_id=turn_id, counted=True) as turn:
            if replacing is not None:
                text, kept = await supersede(self, replacing, text)
                attachments = [*kept, *attachments]
            inner = asyncio.create_task(self._turn(text, quick, attachments))
            self._current = inner
            try:
                result = await inner
            finally:
                self._current = None
            result = dataclasses.replace(result, turn_id=turn)
            for callback in list(self.after_turn):
                try:
                    await callback(result)
                except Exception:  # one failing step must not fail the turn
                    log.exception("after-turn step failed")
        # Told once the lease is given back: the next turn (anywhere) may start now.
        self.hooks.on_turn_finished(result)
        self.hooks.on_context_meter(self.context_meter())
        return result

    def cancel(self) -> bool:
        """Cancel the running turn; it ends with a consistent log. True if one was running."""
        if self._current is not None and not self._current.done():
            self._current.cancel()
            return True
        return False

    async def clear(self, *, wait: bool = True) -> None:
        """Start afresh: append a `cleared` event (nothing is deleted), under the lease."""
        async with self.hold_turn(wait=wait, counted=True):
            await self.append([ClearedEvent()])
            self.hooks.on_context_meter(self.context_meter())

    def context_meter(self) -> ContextMeter:
        """How much of the compaction threshold the live context uses (an estimate)."""
        prompt, cached = last_reply_usage(self._view.messages if self._view else [])
        return ContextMeter(
            self.estimate_context_tokens(), self.options.compact_at_tokens, prompt, cached
        )

    def estimate_context_tokens(self) -> int:
        """The live context's size in tokens, estimated (see `context_size.estimate_tokens`)."""
        return 0 if self._view is None else estimate_tokens(self._view)

    def request(
        self,
        tools_offered: bool = True,
        contents: list[MessageEvent] | None = None,
        thinking_level: str | None = None,
    ) -> ModelRequest:
        """The request the next step sends: system instruction, live contents, tools.

        Without tools it carries the budget guardrail. `contents` replaces the live ones
        (compaction sizes the context it would leave).
        """
        opts = self.options
        instruction = system_instruction(opts.data_dir, opts.workspace)
        if opts.remember_facts and self.facts is not None:
            # Last, and byte-stable: the cached prefix changes only when a fact does.
            instruction += REMEMBER_HINT + self.facts_text
        if not tools_offered:
            instruction += budget_guardrail(opts.max_tool_calls)
        return ModelRequest(
            model=opts.model,
            system_instruction=instruction,
            contents=self._recent_contents() if contents is None else contents,
            tools=self.tools.specs() if tools_offered else [],
            thinking_level=opts.thinking_level if thinking_level is None else thinking_level,
            web_tools=opts.web_tools,
        )

    def _recent_contents(self) -> list[MessageEvent]:
        contents, self.overflowing = sendable(self.view, 2 * self.options.compact_at_tokens)
        return contents

    async def _turn(
        self, text: str | None, quick: bool = False, attachments: Sequence[AttachmentPart] = ()
    ) -> TurnResult:
        view = self.view
        self.turn_from_seq = view.last_user_seq()  # a retry: its question starts the turn
        # We hold the lease, so whoever made a dangling call is gone: answer it now.
        repair = view.repair()
        if repair is not None:
            log.warning(
                "answering %d dangling tool call(s) from an interrupted turn", len(repair.parts)
            )
            self.turn_from_seq = (await self.append([repair]))[0].seq
        if text is not None:
            parts: list[Part] = [time_note(self.clock()), *attachments]
            if text or not attachments:
                parts.append(TextPart(text=text))
            try:
                remembered = await self._remembered(text) if text else []
            except asyncio.CancelledError:
                await self.append([MessageEvent(role="user", origin="person", parts=parts)])
                return TurnResult(text="", cancelled=True, last_seq=self.view.last_seq)
            if remembered:
                parts.append(remembered_part(remembered))
            (user,) = await self.append([MessageEvent(role="user", origin="person", parts=parts)])
            self.turn_from_seq = user.seq if repair is None else self.turn_from_seq
        self.hooks.on_turn_started(text)
        level = self.options.quick_thinking_level if quick else self.options.thinking_level
        state = TurnState(calls_made=view.tool_calls_since_user_turn(), thinking_level=level)
        try:
            return await run_steps(self, state)
        except asyncio.CancelledError:
            await after_cancel(self, state)
            return TurnResult(
                text="".join(state.partial_text),
                tool_calls=state.executed,
                cancelled=True,
                last_seq=self.view.last_seq,
            )

    async def _remembered(self, text: str) -> list[Remembered]:
        """Past passages related to `text` that the model does not already see."""
        if self.memories is None or not self.options.surface_memories:
            return []
        return await self.memories.for_new_turn(self.log, self.conversation_id, text, self.view)

"""Compaction: when the live context grows past the threshold, fold older turns into a summary.

Decided after a turn (never in the middle of one), run in the background. The conversation's
prompt size is the last response's reported prompt + output tokens plus an estimate for what
was appended since; `count_tokens` is asked only when that estimate is close to the threshold,
and the summarizer's own usage never counts. The recent turns are kept word for word (see
`cut`), the rest is summarised together with the previous summary, and the result is a
`compaction` event appended through the agent (so the live context updates) plus an entry in
the day's memory file, and the new facts about the user the summariser listed (while facts
are on; agent/summary_facts.py). If the summarizer fails, nothing is appended and it is
tried after the next turn.

Ordering (see `background`): the summariser requests run outside the turn lease, so turns go
on meanwhile on the recent part; the compaction lists the ids of the messages it summarised
(`covered_ids`, see domain/coverage.py), so whatever was appended meanwhile, here or on
another device, stays live. Only the final append takes the turn lease, and
under it the latest boundary is checked again: a clear or compaction that landed meanwhile
(here or in another process) makes this one stand down instead of folding stale context. A
second lease, `<conversation>#compaction`, keeps two processes from compacting at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime

from koroku_desktop.agent.context_size import CHARS_PER_TOKEN
from koroku_desktop.agent.cut import choose_cut, estimate_tokens
from koroku_desktop.agent.hooks import Hook, TurnResult
from koroku_desktop.agent.host import CompactionHost
from koroku_desktop.agent.memory import memory_entry
from koroku_desktop.agent.memory_events import sync_memory_files
from koroku_desktop.agent.older_messages import read_messages
from koroku_desktop.agent.summarizer import MAX_INPUT_CHARS, TOOL_TEXT_CHARS, Summarizer
from koroku_desktop.agent.summary_facts import fact_events, facts_ask
from koroku_desktop.domain.context import SUMMARY_PREFIX
from koroku_desktop.domain.events import (
    CompactionEvent,
    Event,
    MemoryEditEvent,
    MessageEvent,
    StoredEvent,
)
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.domain.parts import TextPart

log = logging.getLogger(__name__)

NEAR_FRACTION = 0.8
"""Below this share of the threshold the estimate is trusted without counting."""
SURE_FRACTION = 1.25
"""Above this share of the threshold compaction is certain, so no count is needed either."""
KEEP_FRACTION = 0.25
"""The kept tail is at most about this share of the threshold, or of the current size when
that is smaller (`compact_now`); the last user turn and what follows it are always kept."""


def conversation_label(agent: CompactionHost) -> str:
    """How a memory-file entry names its conversation: `Title (abcd1234)`."""
    return f"{agent.conversation_title or 'Conversation'} ({agent.conversation_id[:8]})"


def compaction_key(conversation_id: str) -> str:
    """The lease key that keeps two processes from compacting one conversation at once."""
    return f"{conversation_id}#compaction"


@dataclass(frozen=True)
class _Plan:
    """What one compaction folds, chosen from the live context when it starts."""

    head_id: str
    """The head boundary's event id when planned ("": none): the compaction lands only
    while it is still the head."""
    base_id: str | None
    """The compaction whose summary this one extends (None: no summary yet)."""
    older: list[StoredEvent]
    kept: list[StoredEvent]
    previous: str | None
    tokens_before: int


@dataclass(eq=False, kw_only=True)
class Compactor:
    """Folds older turns of an agent's live context into a rolling, LLM-written summary.

    `attach` makes each turn end with `maybe_compact`, which starts a background compaction
    when the context passed the threshold; `wait` and `cancel` let a front end finish or stop
    it. `compact_now` compacts on request (`koroku compact`, under the caller's turn lease).
    `last_problem` says why the last attempt appended nothing.
    """

    summarizer_model: str | None = None
    max_input_chars: int = MAX_INPUT_CHARS
    tool_chars: int = TOOL_TEXT_CHARS
    keep_fraction: float = KEEP_FRACTION
    clock: Callable[[], datetime] = datetime.now
    last_problem: str | None = field(init=False, default=None)
    progress: Hook[[int, int]] = field(
        init=False, default_factory=lambda: Hook("compaction_progress")
    )
    """Called with (chunks done, chunks in all) while a long history is summarised."""
    task: asyncio.Task[CompactionEvent | None] | None = field(init=False, default=None)
    """The background compaction, while it runs (see `background`)."""

    def attach(self, agent: CompactionHost) -> None:
        """Check after each of `agent`'s turns whether to compact (in the background)."""
        agent.after_turn.append(functools.partial(self.maybe_compact, agent))

    @property
    def running(self) -> bool:
        """Whether a background compaction runs now."""
        return self.task is not None and not self.task.done()

    async def wait(self) -> CompactionEvent | None:
        """Wait for the background compaction (if any); cancelling the wait cancels it."""
        task = self.task
        if task is None:
            return None
        return await task

    async def cancel(self) -> None:
        """Stop the background compaction cleanly: nothing is half-written (see `background`)."""
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # -- when ------------------------------------------------------------------------------

    async def maybe_compact(
        self, agent: CompactionHost, result: TurnResult | None = None
    ) -> asyncio.Task[CompactionEvent | None] | None:
        """After a turn (or on opening a long history): start a background compaction if
        the live context passed `compact_at_tokens` or overflowed. Returns its task."""
        if (result is not None and result.cancelled) or self.running:
            return None
        await agent.load()
        long = agent.overflowing or agent.view.unloaded is not None
        size = await self.prompt_tokens(agent)
        if size < agent.options.compact_at_tokens and not long:
            return None
        log.info("live context ~%d tokens >= %d: compacting", size, agent.options.compact_at_tokens)
        return self.start(agent, size)

    def start(
        self, agent: CompactionHost, tokens_before: int
    ) -> asyncio.Task[CompactionEvent | None]:
        """Start `background` as a task (or return the one running)."""
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self.background(agent, tokens_before))
        return self.task

    async def compact_now(self, agent: CompactionHost) -> CompactionEvent | None:
        """Compact whatever the size, in the foreground; the caller holds the turn lease or
        no turn runs. None if nothing was appended (`last_problem` says why)."""
        if agent.busy:
            self.last_problem = "a turn is running; compact after it"
            return None
        if self.running:
            self.last_problem = "a compaction is already running here"
            return None
        await agent.load()
        size = await self.prompt_tokens(agent, count=True)
        async with self._compaction_lease(agent) as free:
            if not free:
                return None
            return await self._compact(agent, size, hold_turn=False)

    async def background(self, agent: CompactionHost, tokens_before: int) -> CompactionEvent | None:
        """Compact without holding the turn lease while the model summarises.

        Under the compaction lease: choose the cut from the live context now, summarise
        chunk by chunk, then take the turn lease (waiting for a running turn) only to check
        the latest boundary and append. A cancel before the append leaves the log as it was;
        a cancel during it still finishes that one write (`Agent.append`).
        """
        try:
            async with self._compaction_lease(agent) as free:
                if not free:
                    return None
                return await self._compact(agent, tokens_before, hold_turn=True)
        except Exception as exc:  # e.g. the database went read-only: no one awaits this task
            self.last_problem = f"the compaction failed: {exc}"
            log.exception("background compaction failed; it is tried again after a turn")
            return None

    @contextlib.asynccontextmanager
    async def _compaction_lease(self, agent: CompactionHost) -> AsyncIterator[bool]:
        """Hold `<conversation>#compaction` (True), or False when another process does."""
        lease = agent.turn_lock
        if lease is None:
            yield True
            return
        key = compaction_key(agent.conversation_id)
        holder = await asyncio.to_thread(lease.try_acquire, key, new_id())
        if holder is not None:
            self.last_problem = f"{holder.where()} is compacting it"
            log.info("not compacting: %s", self.last_problem)
            yield False
            return
        try:
            yield True
        finally:
            await asyncio.shield(asyncio.to_thread(lease.release, key))

    async def prompt_tokens(self, agent: CompactionHost, *, count: bool = False) -> int:
        """The live context's prompt size in tokens, counted by the model only when needed.

        The estimate (last reported usage + ~4 characters a token since) is exact when the
        last content is a reply with usage; otherwise `count_tokens` is asked when the
        estimate is near the threshold (or always with `count`). A failed count falls back
        to the estimate.
        """
        estimate = agent.estimate_context_tokens()
        threshold = agent.options.compact_at_tokens
        if not count:
            near = NEAR_FRACTION * threshold <= estimate < SURE_FRACTION * threshold
            if self._estimate_is_exact(agent) or not near:
                return estimate
        try:
            return await agent.model.count_tokens(agent.request())
        except ModelError as exc:
            log.warning("count_tokens failed (%s); using the estimate", exc)
            return estimate

    @staticmethod
    def _estimate_is_exact(agent: CompactionHost) -> bool:
        messages = agent.view.messages
        if not messages:
            return False
        last = messages[-1]
        event = last.event
        return (
            isinstance(event, MessageEvent)
            and last.seq > agent.view.boundary_seq
            and event.usage is not None
            and event.usage.prompt_tokens is not None
        )

    # -- how -------------------------------------------------------------------------------

    async def _plan(self, agent: CompactionHost, tokens_before: int) -> _Plan | None:
        """What to fold, from the live context as it is now (copied: turns go on)."""
        view = agent.view
        stored = [m for m in view.messages if isinstance(m.event, MessageEvent)]
        previous = view.summary.summary if view.summary is not None else None
        if view.unloaded is not None:  # a long history: its older part is only in the log
            rejected = frozenset(view.rejected)
            older_part = await asyncio.to_thread(
                read_messages, agent.log, agent.conversation_id, *view.unloaded, rejected
            )
            older_part = [m for m in older_part if m.turn_id not in view.superseded]
            stored = older_part + stored
        events = [m.event for m in stored if isinstance(m.event, MessageEvent)]
        # A quarter of the threshold; when compacting by hand below it, of the current size.
        budget = int(min(agent.options.compact_at_tokens, tokens_before) * self.keep_fraction)
        cut = choose_cut(events, budget)
        if cut is None:
            self.last_problem = "nothing to compact: the live context is only the latest turn"
            log.info(self.last_problem)
            return None
        base = view.head_id if view.summary is not None else None
        return _Plan(view.head_id, base, stored[:cut], stored[cut:], previous, tokens_before)

    async def _compact(
        self, agent: CompactionHost, tokens_before: int, *, hold_turn: bool
    ) -> CompactionEvent | None:
        plan = await self._plan(agent, tokens_before)
        if plan is None:
            return None
        book = agent.facts if agent.options.remember_facts else None
        known = book.facts if book is not None else []
        ask = facts_ask(known) if book is not None else ""
        summarizer = Summarizer(agent.model, self.max_input_chars, self.tool_chars, ask)
        try:
            summary = await summarizer.summarize(
                self.summarizer_model or agent.options.model,
                plan.previous,
                plan.older,
                self.progress,
            )
        except ModelError as exc:
            self.last_problem = f"the summarizer failed: {exc}"
            log.warning("compaction skipped, will retry after the next turn: %s", exc)
            return None
        if not summary:
            self.last_problem = "the summarizer returned no text"
            log.warning("compaction skipped, will retry after the next turn: empty summary")
            return None
        tokens_after = await self._tokens_after(agent, summary, plan.kept)
        older = plan.older
        event = CompactionEvent(
            summary=summary,
            covers_up_to_seq=older[-1].seq,
            kept_from_seq=plan.kept[0].seq if plan.kept else older[-1].seq + 1,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            covered_ids=[m.event_id for m in older],
            base_id=plan.base_id,
        )
        when = self.clock()
        memory = MemoryEditEvent(
            day=f"{when:%d-%m-%Y}",
            op="append",
            text=memory_entry(summary, when, conversation_label(agent)),
            source="compaction",
        )
        facts = fact_events(summarizer.facts, older, known)
        if hold_turn:
            async with agent.hold_turn():  # caught up: the latest boundary is folded in
                if not await self._land(agent, plan, [event, memory, *facts]):
                    return None
        elif not await self._land(agent, plan, [event, memory, *facts]):
            return None
        await self._remember(agent)
        agent.hooks.on_context_meter(agent.context_meter())
        return event

    async def _land(self, agent: CompactionHost, plan: _Plan, events: list[Event]) -> bool:
        """Append the compaction with its memory-file entry and new facts unless a clear or
        compaction landed since the plan (stale)."""
        if agent.view.head_id != plan.head_id:
            self.last_problem = (
                f"a newer clear or compaction (#{agent.view.boundary_seq}) landed meanwhile; "
                "this compaction was dropped"
            )
            log.info(self.last_problem)
            return False
        await agent.append(events)
        self.last_problem = None
        return True

    async def _tokens_after(
        self, agent: CompactionHost, summary: str, kept: list[StoredEvent]
    ) -> int:
        """The prompt size once compacted: counted by the model, or estimated if that fails."""
        contents = [MessageEvent(role="user", parts=[TextPart(text=SUMMARY_PREFIX + summary)])]
        contents.extend(m.event for m in kept if isinstance(m.event, MessageEvent))
        request = agent.request(contents=contents)
        try:
            return await agent.model.count_tokens(request)
        except ModelError as exc:
            log.warning("count_tokens failed (%s); estimating the compacted size", exc)
        specs = [(t.name, t.description, t.parameters) for t in request.tools]
        fixed = len(request.system_instruction) + len(json.dumps(specs, ensure_ascii=False))
        return fixed // CHARS_PER_TOKEN + sum(estimate_tokens(c) for c in contents)

    async def _remember(self, agent: CompactionHost) -> None:
        """Write the memory files from the log (the summary's entry is an event now); a
        failure there is only logged: the log has it, the next start writes it."""
        try:
            await asyncio.to_thread(
                sync_memory_files, agent.log, agent.conversation_id, agent.options.data_dir
            )
        except OSError:
            log.exception("could not write the memory file")

"""Compaction: when the live context grows past the threshold, fold older turns into a summary.

Runs after a turn (never in the middle of one). The conversation's prompt size is the last
response's reported prompt + output tokens plus an estimate for what was appended since;
`count_tokens` is asked only when that estimate is close to the threshold, and the
summarizer's own usage never counts. The recent turns are kept word for word (see `cut`), the
rest is summarised together with the previous summary, and the result is a `compaction`
event appended through the agent (so the live context updates) plus an entry in the day's
memory file. If the summarizer fails, nothing is appended and it is tried after the next turn.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import datetime

from koroku_desktop.agent.cut import CHARS_PER_TOKEN, choose_cut, estimate_tokens
from koroku_desktop.agent.hooks import Hook, TurnResult
from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.memory import append_memory
from koroku_desktop.agent.summarizer import MAX_INPUT_CHARS, TOOL_TEXT_CHARS, Summarizer
from koroku_desktop.domain.context import SUMMARY_PREFIX
from koroku_desktop.domain.events import (
    CompactionEvent,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
)
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


PAGE = 5_000


def read_messages(agent: Agent, first: int, before: int) -> list[StoredEvent]:
    """The live message events with seq in [first, before), read from the log page by page.

    Messages a later `rejected` event set aside are left out, as in the live context.
    """
    found: list[StoredEvent] = []
    rejected: set[int] = set()
    after = first - 1
    while True:
        page = agent.log.entries(
            agent.conversation_id, after_seq=after, before_seq=before, limit=PAGE
        )
        for entry in page:
            if isinstance(entry, StoredEvent):
                if isinstance(entry.event, MessageEvent):
                    found.append(entry)
                elif isinstance(entry.event, RejectedEvent):
                    rejected.add(entry.event.rejected_seq)
        if len(page) < PAGE:
            break
        after = page[-1].seq
    rejected |= agent.view.rejected
    return [m for m in found if m.seq not in rejected]


class Compactor:
    """Folds older turns of an agent's live context into a rolling, LLM-written summary.

    Register `maybe_compact` in `agent.after_turn` (see `attach`); `compact_now` compacts on
    request (`koroku compact`). `last_problem` says why the last attempt appended nothing.
    """

    def __init__(
        self,
        *,
        summarizer_model: str | None = None,
        max_input_chars: int = MAX_INPUT_CHARS,
        tool_chars: int = TOOL_TEXT_CHARS,
        keep_fraction: float = KEEP_FRACTION,
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        self.summarizer_model = summarizer_model
        self.max_input_chars = max_input_chars
        self.tool_chars = tool_chars
        self.keep_fraction = keep_fraction
        self.clock = clock
        self.last_problem: str | None = None
        self.progress: Hook[[int, int]] = Hook("compaction_progress")
        """Called with (chunks done, chunks in all) while a long history is summarised."""

    def attach(self, agent: Agent) -> None:
        """Run `maybe_compact` after each of `agent`'s turns."""
        agent.after_turn.append(self.maybe_compact)

    # -- when ------------------------------------------------------------------------------

    async def maybe_compact(self, agent: Agent, result: TurnResult) -> CompactionEvent | None:
        """After a turn: compact if the live context passed `compact_at_tokens`."""
        if result.cancelled:
            return None
        await agent.load()
        size = await self.prompt_tokens(agent)
        if size < agent.options.compact_at_tokens and not agent.overflowing:
            return None
        log.info("live context ~%d tokens >= %d: compacting", size, agent.options.compact_at_tokens)
        return await self._compact(agent, size)

    async def compact_now(self, agent: Agent) -> CompactionEvent | None:
        """Compact whatever the size (call between turns); None if nothing was appended."""
        if agent.busy:
            self.last_problem = "a turn is running; compact after it"
            return None
        await agent.load()
        size = await self.prompt_tokens(agent, count=True)
        return await self._compact(agent, size)

    async def prompt_tokens(self, agent: Agent, *, count: bool = False) -> int:
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
    def _estimate_is_exact(agent: Agent) -> bool:
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

    async def _compact(self, agent: Agent, tokens_before: int) -> CompactionEvent | None:
        view = agent.view
        stored = [m for m in view.messages if isinstance(m.event, MessageEvent)]
        if view.unloaded is not None:  # a long history: its older part is only in the log
            older_part = await asyncio.to_thread(read_messages, agent, *view.unloaded)
            stored = older_part + stored
        events = [m.event for m in stored if isinstance(m.event, MessageEvent)]
        # A quarter of the threshold; when compacting by hand below it, of the current size.
        budget = int(min(agent.options.compact_at_tokens, tokens_before) * self.keep_fraction)
        cut = choose_cut(events, budget)
        if cut is None:
            self.last_problem = "nothing to compact: the live context is only the latest turn"
            log.info(self.last_problem)
            return None
        older, kept = stored[:cut], stored[cut:]
        previous = view.summary.summary if view.summary is not None else None
        summarizer = Summarizer(agent.model, self.max_input_chars, self.tool_chars)
        try:
            summary = await summarizer.summarize(
                self.summarizer_model or agent.options.model, previous, older, self.progress
            )
        except ModelError as exc:
            self.last_problem = f"the summarizer failed: {exc}"
            log.warning("compaction skipped, will retry after the next turn: %s", exc)
            return None
        if not summary:
            self.last_problem = "the summarizer returned no text"
            log.warning("compaction skipped, will retry after the next turn: empty summary")
            return None
        tokens_after = await self._tokens_after(agent, summary, kept)
        event = CompactionEvent(
            summary=summary,
            covers_up_to_seq=older[-1].seq,
            kept_from_seq=kept[0].seq if kept else older[-1].seq + 1,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
        )
        await agent.append([event])
        self.last_problem = None
        await self._remember(agent, summary)
        agent.hooks.on_context_meter(agent.context_meter())
        return event

    async def _tokens_after(self, agent: Agent, summary: str, kept: list[StoredEvent]) -> int:
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

    async def _remember(self, agent: Agent, summary: str) -> None:
        """Append the summary to the day's memory file; a failure there is only logged."""
        try:
            await asyncio.to_thread(append_memory, agent.options.data_dir, summary, self.clock())
        except OSError:
            log.exception("could not write the memory file")

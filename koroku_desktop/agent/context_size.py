"""How big the live context is, in tokens, without asking the model (for the meter and
for deciding when to compact)."""

from __future__ import annotations

from koroku_desktop.agent.cut import CHARS_PER_TOKEN, part_tokens
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import MessageEvent


def estimate_tokens(view: ContextView) -> int:
    """Last reported prompt size plus an estimate of what came after it (`part_tokens`:
    ~4 characters a token; attached files by kind).

    Usage reported before the latest compaction is stale (it measured the old context):
    then the compaction's `tokens_after` is the base, or everything is estimated.
    """
    summary = view.summary
    base: int | None = None
    tail_tokens = 0
    for stored in reversed(view.messages):
        event = stored.event
        if not isinstance(event, MessageEvent):
            continue
        fresh = stored.seq > view.boundary_seq
        if fresh and event.usage and event.usage.prompt_tokens is not None:
            base = event.usage.prompt_tokens + (event.usage.output_tokens or 0)
            break
        if not fresh and summary is not None and summary.tokens_after is not None:
            base = summary.tokens_after
            break
        tail_tokens += sum(part_tokens(p) for p in event.parts)
    if base is None:
        base = 0
        if summary is not None and summary.tokens_after is not None:
            base = summary.tokens_after
        elif summary is not None:
            tail_tokens += len(summary.summary) // CHARS_PER_TOKEN
    return base + tail_tokens

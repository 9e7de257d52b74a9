"""Where to cut the live context for a compaction: a pure choice over the message contents.

Everything before the cut is folded into the summary; everything from the cut on is kept
word for word. The kept tail is made of whole turns: it always holds the last real user turn
and what followed it, is otherwise at most `budget_tokens` long, never starts with function
responses, and never separates a model content with function calls from the content
answering it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from koroku_desktop.agent.context_size import content_tokens
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import MessageEvent

log = logging.getLogger(__name__)

estimate_tokens = content_tokens
"""A rough token count of one content (see `context_size.content_tokens`)."""


def last_user_turn(messages: Sequence[MessageEvent]) -> int | None:
    """Index of the last real user turn (a user content that answers no call), if any."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].is_user_turn:
            return index
    return None


def is_valid_cut(messages: Sequence[MessageEvent], index: int) -> bool:
    """True when the kept tail may start at `messages[index]` (len(messages) keeps nothing).

    The first kept content must not be function responses, and the last summarised content
    must not be calls (their responses would be split off, or the calls left dangling).
    """
    if index <= 0 or index > len(messages):
        return False
    if index < len(messages) and messages[index].function_responses:
        return False
    return not messages[index - 1].function_calls


def choose_cut(
    messages: Sequence[MessageEvent],
    budget_tokens: int,
    size: Callable[[MessageEvent], int] = estimate_tokens,
) -> int | None:
    """Index of the first content kept verbatim, or None when there is nothing to summarise.

    Keeps whole turns: the last real user turn and everything after it always, and earlier
    turns (walking back) while the kept tail stays within `budget_tokens`. Without any user
    turn (a history that starts mid-turn), any valid point within the budget will do.
    """
    if not messages:
        return None
    latest = last_user_turn(messages)
    if latest is None:
        latest = len(messages)

    def allowed(index: int) -> bool:
        turn_start = index == len(messages) or messages[index].is_user_turn
        return is_valid_cut(messages, index) and (turn_start or latest == len(messages))

    kept = sum(size(m) for m in messages[latest:])
    best = latest if allowed(latest) else None
    for index in range(latest - 1, 0, -1):
        kept += size(messages[index])
        if kept > budget_tokens:
            break
        if allowed(index):
            best = index
    if best is None:
        # The last user turn directly follows unanswered calls (a damaged history): keep
        # from the nearest earlier point where a cut is valid.
        best = next((i for i in range(latest - 1, 0, -1) if is_valid_cut(messages, i)), None)
    return best


def recent_start(
    messages: Sequence[MessageEvent],
    budget_tokens: int,
    size: Callable[[MessageEvent], int] = estimate_tokens,
) -> int:
    """Where the most recent whole turns that fit in `budget_tokens` start (0: all fit).

    Walks back from the end only as far as the budget reaches, so it costs the same for a
    history of 100 contents as for one of 100,000. The last user turn is always included.
    """
    kept = 0
    latest = last_user_turn(messages)
    for index in range(len(messages) - 1, -1, -1):
        kept += size(messages[index])
        if kept > budget_tokens and (latest is None or index < latest):
            start = index + 1
            while start < len(messages) and not (
                messages[start].is_user_turn and is_valid_cut(messages, start)
            ):
                start += 1
            if start < len(messages):
                return start
            return latest if latest is not None and latest > 0 else 0
    return 0


def sendable(view: ContextView, budget_tokens: int) -> tuple[list[MessageEvent], bool]:
    """The contents to send, and whether older turns were left out for now.

    While a history too long to send waits for its compaction (or was only partly loaded),
    the request carries the summary and the most recent turns that fit in `budget_tokens`.
    """
    contents = view.contents()
    head = 1 if view.summary is not None else 0
    start = recent_start(contents[head:], budget_tokens)
    if not start:
        return contents, view.unloaded is not None
    kept = [*contents[:head], *contents[head + start :]]
    log.info("history too long to send until compacted: sending %d contents", len(kept))
    return kept, True

"""What the log holds of each conversation (message count, last activity), for the registry.

Read by skipping along the `(conversation_id, kind, seq)` index: the conversations, then the
kinds of each, then the newest and oldest seq of each kind are single index lookups, so the
cost grows with the number of conversations, not with the log. Counting messages reads each
conversation's message range of the index (only a list asks for it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from koroku_desktop.domain.conversations import Activity

Rows = Callable[[str, Sequence[object]], list[tuple[Any, ...]]]

_FIRST_ID = "SELECT MIN(conversation_id) FROM events"
_NEXT_ID = "SELECT MIN(conversation_id) FROM events WHERE conversation_id > ?"
_FIRST_KIND = "SELECT MIN(kind) FROM events WHERE conversation_id = ?"
_NEXT_KIND = "SELECT MIN(kind) FROM events WHERE conversation_id = ? AND kind > ?"
_EDGE = (
    "SELECT seq, created_at FROM events WHERE conversation_id = ? AND kind = ?"
    " ORDER BY seq {} LIMIT 1"
)
_COUNT = "SELECT COUNT(*) FROM events WHERE conversation_id = ? AND kind = 'message'"


def _skip(rows: Rows, first: str, after: str, params: tuple[object, ...]) -> list[str]:
    """Every distinct value an index column takes, one lookup each."""
    found: list[str] = []
    got = rows(first, params)
    while got and got[0][0] is not None:
        found.append(str(got[0][0]))
        got = rows(after, (*params, found[-1]))
    return found


def kinds_of(rows: Rows, conversation_id: str) -> list[str]:
    """Every kind used in a conversation, by skipping along the index (no scan)."""
    return _skip(rows, _FIRST_KIND, _NEXT_KIND, (conversation_id,))


def conversation_activity(rows: Rows, *, counts: bool = True) -> dict[str, Activity]:
    """Each conversation's activity, by id (`last_seq` 0 for one with only `conversation`
    events; `messages` 0 without `counts`)."""
    found: dict[str, Activity] = {}
    for cid in _skip(rows, _FIRST_ID, _NEXT_ID, ()):
        last, last_at, first, first_at = 0, 0.0, 0, 0.0
        for kind in kinds_of(rows, cid):
            ((low, low_at),) = rows(_EDGE.format("ASC"), (cid, kind))
            if first == 0 or low < first:
                first, first_at = int(low), float(low_at)
            if kind == "conversation":
                continue
            ((high, high_at),) = rows(_EDGE.format("DESC"), (cid, kind))
            if high > last:
                last, last_at = int(high), float(high_at)
        messages = int(rows(_COUNT, (cid,))[0][0]) if counts else 0
        found[cid] = Activity(cid, messages, last, last_at, first_at)
    return found

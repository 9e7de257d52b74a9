"""What the log holds of each conversation (message count, last activity), for the registry.

One pass over the `(conversation_id, kind, seq)` index grouped by conversation and kind (no
table scan), then one row lookup per conversation for its times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from koroku_desktop.domain.conversations import Activity

Rows = Callable[[str, Sequence[object]], list[tuple[object, ...]]]

_BY_KIND = (
    "SELECT conversation_id, kind, COUNT(*), MAX(seq), MIN(seq) FROM events"
    " GROUP BY conversation_id, kind"
)
_AT = "SELECT created_at FROM events WHERE seq = ?"


def conversation_activity(rows: Rows) -> dict[str, Activity]:
    """Each conversation's activity, by id (conversations with only `conversation` events
    have `last_seq` 0)."""
    counts: dict[str, list[int]] = {}
    for cid, kind, count, last, first in rows(_BY_KIND, ()):
        if not isinstance(cid, str):
            continue
        item = counts.setdefault(cid, [0, 0, 0])
        if kind == "message":
            item[0] += int(str(count))
        if kind != "conversation":
            item[1] = max(item[1], int(str(last)))
        low = int(str(first))
        item[2] = low if item[2] == 0 else min(item[2], low)
    found: dict[str, Activity] = {}
    for cid, (messages, last, first) in counts.items():
        last_at = _at(rows, last) if last else 0.0
        found[cid] = Activity(cid, messages, last, last_at, _at(rows, first))
    return found


def _at(rows: Rows, seq: int) -> float:
    got = rows(_AT, (seq,))
    return float(str(got[0][0])) if got else 0.0

"""What compactions cover, kept queryable, so loading the live context costs what is live.

A compaction lists the ids it summarised (`covered_ids`) and the summary it extended
(`base_id`); the live context leaves out whatever the head's chain covers (domain/coverage.py).
Parsing every compaction of a long history to learn that costs the whole history at every
start, so three derived tables (m008) keep it in a form SQL reads directly:

- `compaction_links`: each compaction's conversation, `base_id`, and whether it covers by id;
- `coverage`: one row per (covered message id, compaction id);
- `live_starts`: per compaction, the seq of the first message its chain leaves live. Every
  message with a lower seq is covered, and rows written later get higher seqs, so once
  found it stays true: a load reads messages from there on, not the history before.

The first two are filled by a trigger on every insert of a compaction row (whatever writes
it: this version, an import, an older Koroku on a migrated file). A start is computed when
a compaction is written (`note_live_starts`, in its transaction), from the start of its
base: only what the new compaction covered is walked. They are derived: the events stay
the truth, and a missing start is simply computed again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from koroku_desktop.store.database import Connection

Rows = Callable[[str, Sequence[object]], list[tuple[Any, ...]]]
_PAGE = 2000

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS compaction_links (event_id TEXT PRIMARY KEY,"
    " conversation_id TEXT NOT NULL, base_id TEXT, by_id INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS compaction_links_conversation"
    " ON compaction_links (conversation_id)",
    "CREATE TABLE IF NOT EXISTS coverage (message_id TEXT NOT NULL,"
    " compaction_id TEXT NOT NULL, PRIMARY KEY (message_id, compaction_id)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS live_starts (compaction_id TEXT PRIMARY KEY,"
    " first_seq INTEGER NOT NULL) WITHOUT ROWID",
)

_JSON = (
    "(CASE WHEN typeof({row}.payload) = 'text' AND json_valid({row}.payload)"
    " THEN {row}.payload ELSE '{{}}' END)"
)
"""A row's payload for the JSON functions: '{}' when it is not JSON text (they would raise)."""
_LINK = (
    "INSERT OR IGNORE INTO compaction_links (event_id, conversation_id, base_id, by_id)"
    " SELECT {row}.event_id, {row}.conversation_id, json_extract({json}, '$.base_id'),"
    " json_type({json}, '$.covered_ids') = 'array'"
)
_COVER = (
    "INSERT OR IGNORE INTO coverage (message_id, compaction_id)"
    " SELECT covered.value, {row}.event_id FROM {source}json_each({json}, '$.covered_ids')"
    " AS covered WHERE covered.type = 'text'"
)
_READABLE = (
    "{row}.kind = 'compaction' AND {row}.event_id IS NOT NULL AND {row}.event_id != ''"
    " AND typeof({row}.payload) = 'text' AND json_valid({row}.payload)"
)


def _sql(template: str, row: str, source: str = "") -> str:
    return template.format(row=row, json=_JSON.format(row=row), source=source)


TRIGGER = (
    "CREATE TRIGGER IF NOT EXISTS events_compaction_coverage AFTER INSERT ON events"
    f" WHEN {_sql(_READABLE, 'NEW')} BEGIN"
    f" {_sql(_LINK, 'NEW')}; {_sql(_COVER, 'NEW')}; END"
)
"""Fills `compaction_links` and `coverage` from each new compaction row (an unreadable
payload is left out: the row is damaged and covers nothing)."""

BACKFILL = (
    f"{_sql(_LINK, 'events')} FROM events WHERE {_sql(_READABLE, 'events')}",
    f"{_sql(_COVER, 'events', 'events, ')} AND {_sql(_READABLE, 'events')}",
)
"""The same for the compaction rows written before m008 (one statement each)."""


class Chain:
    """A head compaction's chain (the head, its base, that one's base...), walked from the
    head one `compaction_links` row at a time, only as far as a question needs.

    A compaction's id is above its base's: an append takes ids after every id already in
    the log, and the base was in it (`ids.observe`). So walking down, ids fall, and a
    compaction with a lower id than the one reached cannot be further up the chain's end.
    """

    def __init__(self, rows: Rows, head_id: str) -> None:
        self._rows = rows
        self.ids = [head_id]
        self._members = {head_id}
        self.kept_from_seq = 0
        """Set when the chain ends at an old compaction (no `covered_ids`): it covered every
        message with a seq below this."""
        self._ended = False

    def _step(self) -> bool:
        """Walk one compaction further (False at the end of the chain)."""
        if self._ended:
            return False
        link = self._rows(
            "SELECT base_id FROM compaction_links WHERE event_id = ? AND by_id", [self.ids[-1]]
        )
        base = str(link[0][0] or "") if link else ""
        if not base or base in self._members:
            self._ended = True
            return False
        self.ids.append(base)
        self._members.add(base)
        found = self._rows("SELECT by_id FROM compaction_links WHERE event_id = ?", [base])
        if not found or not found[0][0]:  # an old compaction (or a row not readable)
            kept = old_kept_from(self._rows, base)
            self.kept_from_seq = kept or 0
            self._ended = True
        return True

    def covers(self, compactions: object) -> bool:
        """Whether one of `compactions` (space-separated ids, from `coverage`) is in it."""
        wanted = str(compactions).split() if compactions else []
        if any(c in self._members for c in wanted):
            return True
        lowest = min(wanted, default="")
        while wanted and self.ids[-1] > lowest and self._step():
            if self.ids[-1] in wanted:
                return True
        return False

    def nearest_start(self) -> tuple[int, bool]:
        """Where a walk for the first live message may start: the start known for the
        nearest compaction of the chain, else the end's old `kept_from_seq`, else 0; and
        whether it is the head's own (then it is the answer)."""
        index = 0
        while True:
            found = self._rows(
                "SELECT first_seq FROM live_starts WHERE compaction_id = ?", [self.ids[index]]
            )
            if found:
                return max(int(found[0][0]), self.kept_from_seq), index == 0
            index += 1
            if index == len(self.ids) and not self._step():
                return self.kept_from_seq, False


def old_kept_from(rows: Rows, event_id: str) -> int | None:
    """An old compaction's `kept_from_seq`, read from its row by id (None: not one)."""
    found = rows(
        "SELECT json_extract(payload, '$.kept_from_seq') FROM events"
        " WHERE event_id = ? AND kind = 'compaction' AND json_valid(payload)"
        " AND json_type(payload, '$.covered_ids') IS NOT 'array'",
        [event_id],
    )
    return int(found[0][0]) if found and isinstance(found[0][0], int) else None


def covering(event_id_column: str) -> str:
    """SQL for the ids of the compactions covering a row's message, space-separated."""
    return (
        "(SELECT group_concat(compaction_id, ' ') FROM coverage"
        f" WHERE message_id = {event_id_column})"
    )


def first_live_seq(rows: Rows, conversation_id: str, chain: Chain) -> int:
    """The seq of the first message of the conversation the chain leaves live (past the end
    when it covers every one). Starts from the nearest start known along the chain."""
    start, heads_own = chain.nearest_start()
    if heads_own:
        return start
    after = start - 1
    while True:
        page = rows(
            f"SELECT seq, {covering('event_id')} FROM events"
            " WHERE conversation_id = ? AND kind = 'message' AND seq > ? ORDER BY seq LIMIT ?",
            [conversation_id, after, _PAGE],
        )
        for seq, compactions in page:
            if not chain.covers(compactions):
                return int(seq)
        if len(page) < _PAGE:
            return after + 1 if not page else int(page[-1][0]) + 1
        after = int(page[-1][0])


def note_live_starts(conn: Connection, compactions: Sequence[tuple[str, str]]) -> None:
    """Compute and keep the first live seq of each new compaction (conversation id, event
    id) that covers by id; inside the transaction that wrote them."""

    def rows(sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        return conn.execute(sql, tuple(params)).fetchall()

    for conversation_id, event_id in compactions:
        if not rows("SELECT 1 FROM compaction_links WHERE event_id = ? AND by_id", [event_id]):
            continue  # not one that covers by id
        first = first_live_seq(rows, conversation_id, Chain(rows, event_id))
        conn.execute(
            "INSERT OR REPLACE INTO live_starts (compaction_id, first_seq) VALUES (?, ?)",
            (event_id, first),
        )


def summarised_in(rows: Rows, event_ids: Sequence[str]) -> dict[str, int]:
    """For those of these messages a compaction covered by id: the seq of the first one."""
    found: dict[str, int] = {}
    ids = list(dict.fromkeys(event_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for message_id, seq in rows(
            "SELECT c.message_id, MIN(e.seq) FROM coverage AS c JOIN events AS e"
            f" ON e.event_id = c.compaction_id WHERE c.message_id IN ({marks})"
            " GROUP BY c.message_id",
            chunk,
        ):
            found[str(message_id)] = int(seq)
    return found


def summary_span(rows: Rows, compaction_id: str) -> tuple[int, int, int] | None:
    """How many messages here a compaction covered by id, with their lowest and highest seq."""
    count, low, high = rows(
        "SELECT COUNT(*), MIN(e.seq), MAX(e.seq) FROM coverage AS c JOIN events AS e"
        " ON e.event_id = c.message_id WHERE c.compaction_id = ?",
        [compaction_id],
    )[0]
    return (int(count), int(low), int(high)) if count else None

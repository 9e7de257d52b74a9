"""ContextIndex: the keyword leg's index: each message with the turns before it, stemmed.

A question rarely shares its words with the one line that answers it ("When did Caroline go
to the support group?" — "I went yesterday", after "What did you do this week?"), so each
message or summary is indexed as a unit: its date, the `CONTEXT_TURNS` messages before it in
its conversation (each clipped to `CONTEXT_CHARS`) in one column and its own searchable text
in another, in an FTS5 table with the Porter stemmer ("painted" finds "painting"). BM25 over
any of the query's words ranks these units, the own text weighing `OWN_WEIGHT` times the
context; a hit is the unit's own event. A word in more than `COMMON_UNITS` units counts in
its newest ones only, so a word found everywhere costs no more than a rare one.

The table is derived, like the vector index: filled in seq order by `catch_up` (before a
keyword search, a bounded batch; all of it at start-up and after an import), with
`context_progress` saying how far. Events past that point (a read-only file, or a long log
not yet indexed) are still found through the plain full-text index.
"""

from __future__ import annotations

import threading
from collections import deque
from datetime import datetime

from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.store.database import Connection, KorokuDatabase, OperationalError
from koroku_desktop.store.log.rows import COLUMNS, parse_row
from koroku_desktop.store.search.searchable import searchable_text

SCHEMA = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS context_fts USING fts5("
    "context, body, tokenize = 'porter unicode61 remove_diacritics 2')",
    "CREATE TABLE IF NOT EXISTS context_progress ("
    "id INTEGER PRIMARY KEY CHECK (id = 1), done_seq INTEGER NOT NULL)",
)
"""The tables (migration m009_context_search)."""
CONTEXT_TURNS = 2
CONTEXT_CHARS = 600
SEARCH_CATCH_UP = 256
"""Events indexed before a keyword search at most, so a cold search stays quick: the rest at
the next ones, and all of it by the app at start, after an import and when `ask`/`chat`
exit (events past the index are found through the plain full-text index meanwhile)."""
PAGE = 2_000
_KINDS = "kind IN ('message', 'compaction')"
"""What is said in a conversation: the context a unit is indexed with."""
INDEXED_KINDS = ("message", "compaction", "fact")
"""What the keyword leg ranks: messages, summaries and the facts about the user (a fact is
a unit of its own, never the context of another: it is not part of what was said)."""
OWN_WEIGHT = 2.0
"""BM25 weight of the event's own text against its context's (1)."""
RANKED_SQL = (
    f"SELECT rowid, bm25(context_fts, 1.0, {OWN_WEIGHT}) AS score FROM context_fts"
    " WHERE context_fts MATCH ? AND rowid < ? ORDER BY score LIMIT ?"
)
COMMON_UNITS = 20_000
"""A word found in more units than this is common: only its newest `COMMON_UNITS` units count
for it, so a word in every unit of a million-event log is not scored a million times. BM25
is a sum over the query's words, each term scored alone, so the units of the other words
keep their exact scores, and an old unit is still found by the rarer words it holds."""
_PART_SQL = (
    f"SELECT rowid AS seq, bm25(context_fts, 1.0, {OWN_WEIGHT}) AS rank FROM context_fts"
    " WHERE context_fts MATCH ? AND rowid > ? AND rowid < ?"
)
_SUMMED_SQL = "SELECT seq, sum(rank) AS total FROM ({parts}) GROUP BY seq ORDER BY total LIMIT ?"
_CUTOFF_SQL = (
    "SELECT rowid FROM context_fts WHERE context_fts MATCH ? AND rowid < ?"
    " ORDER BY rowid DESC LIMIT 1 OFFSET ?"
)


def context_text(created_at: float, before: list[str]) -> str:
    """The indexed unit's context: the day it was said and the turns before it (clipped)."""
    day = datetime.fromtimestamp(created_at)
    return "\n".join([f"{day.day} {day:%B %Y}", *(t[:CONTEXT_CHARS] for t in before)])


class ContextIndex:
    """Keeps `context_fts` in step with the log and answers ranked queries over it."""

    def __init__(self, db: KorokuDatabase) -> None:
        self._db = db
        self._lock = threading.Lock()

    def done_seq(self) -> int:
        """The seq up to which every event is in the index (0 when the table is missing)."""
        try:
            row = self._db.conn().execute("SELECT done_seq FROM context_progress").fetchone()
        except OperationalError:  # an old file opened read-only: not migrated
            return 0
        return int(row[0]) if row else 0

    def catch_up(self, max_events: int | None = SEARCH_CATCH_UP) -> int:
        """Index the events after `done_seq` (at most `max_events`; None: all); how many.
        A read-only file is left as it is."""
        if self._db.read_only:
            return 0
        done = 0
        with self._lock:
            while max_events is None or done < max_events:
                page = PAGE if max_events is None else min(PAGE, max_events - done)
                moved = self._index_page(page)
                done += moved
                if moved < page:
                    break
        return done

    def _index_page(self, page: int) -> int:
        conn = self._db.conn()
        after = self.done_seq()
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (after, page)
        ).fetchall()
        if not rows:
            return 0
        recent: dict[str, deque[str]] = {}
        units: list[tuple[int, str, str]] = []
        for row in rows:
            entry = parse_row(row)
            if not isinstance(entry, StoredEvent) or row[2] not in INDEXED_KINDS:
                continue
            own = searchable_text(entry.event)
            if not own:
                continue
            before = recent.get(entry.conversation_id)
            if before is None:
                before = recent[entry.conversation_id] = deque(
                    self._texts_before(conn, entry.conversation_id, entry.seq),
                    maxlen=CONTEXT_TURNS,
                )
            units.append((entry.seq, context_text(entry.created_at, list(before)), own))
            if row[2] != "fact":
                before.append(own[:CONTEXT_CHARS])
        with self._db.atomic("IMMEDIATE"):
            if self.done_seq() != after:  # another process indexed this page meanwhile
                return len(rows)
            conn.executemany(
                "INSERT INTO context_fts (rowid, context, body) VALUES (?, ?, ?)", units
            )
            conn.execute(
                "INSERT INTO context_progress (id, done_seq) VALUES (1, ?)"
                " ON CONFLICT (id) DO UPDATE SET done_seq = excluded.done_seq",
                (int(rows[-1][0]),),
            )
        return len(rows)

    def _texts_before(self, conn: Connection, conversation: str, seq: int) -> list[str]:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM events WHERE conversation_id = ? AND {_KINDS} AND seq < ?"
            " ORDER BY seq DESC LIMIT ?",
            (conversation, seq, CONTEXT_TURNS * 4),
        ).fetchall()
        texts: list[str] = []
        for row in rows:
            entry = parse_row(row)
            if isinstance(entry, StoredEvent) and (text := searchable_text(entry.event)):
                texts.append(text[:CONTEXT_CHARS])
            if len(texts) == CONTEXT_TURNS:
                break
        return texts[::-1]

    def ranked(
        self, match: str, limit: int, below_seq: int, common: int = COMMON_UNITS
    ) -> list[tuple[int, float]]:
        """(seq, BM25 rank: lower is better) of the best units below `below_seq` for an
        `fts_any_query` match (quoted words joined by OR), a word in more than `common` units
        counting in its newest `common` only (see `COMMON_UNITS`)."""
        try:
            conn = self._db.conn()
            words = match.split(" OR ")
            cutoffs: dict[str, int] = {}
            for word in words:
                row = conn.execute(_CUTOFF_SQL, (word, below_seq, common)).fetchone()
                if row is not None:
                    cutoffs[word] = int(row[0])
            if cutoffs:  # each common word's newest units and the rare words', summed
                rare = " OR ".join(w for w in words if w not in cutoffs)
                parts = [*([(rare, 0)] if rare else []), *cutoffs.items()]
                sql = _SUMMED_SQL.format(parts=" UNION ALL ".join([_PART_SQL] * len(parts)))
                args = [x for words_or, after in parts for x in (words_or, after, below_seq)]
                rows = conn.execute(sql, (*args, limit)).fetchall()
            else:  # the plain ranking
                rows = conn.execute(RANKED_SQL, (match, below_seq, limit)).fetchall()
        except OperationalError:  # not migrated (read-only old file)
            return []
        return [(int(seq), float(rank)) for seq, rank in rows]

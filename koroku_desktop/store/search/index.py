"""The full-text index: search text staged with each event, folded into FTS5 in batches.

FTS5 writes a new index segment on every commit, which makes one-event appends several
times slower. So `append` writes each event's search text into `events_fts_pending` in the
SAME transaction as the event (nothing can be lost or be out of step), and the pending rows
are moved into `events_fts` in one transaction every `FLUSH_AT` events, before every search,
and on close. A search therefore always sees every event ever appended.
"""

from __future__ import annotations

import threading

from koroku_desktop.store.database import Connection, KorokuDatabase

FLUSH_AT = 256
"""Pending rows that trigger a fold into the FTS index."""

STAGE_SQL = "INSERT INTO events_fts_pending (seq, body) VALUES (?, ?)"
_FOLD = (
    "INSERT INTO events_fts (rowid, body) SELECT seq, body FROM events_fts_pending ORDER BY seq",
    "DELETE FROM events_fts_pending",
)


class SearchIndex:
    """Stages search text inside append transactions and folds it into FTS5 in batches."""

    def __init__(self, db: KorokuDatabase) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._staged = self._pending_rows()

    def _pending_rows(self) -> int:
        row = self._db.conn().execute("SELECT COUNT(*) FROM events_fts_pending").fetchone()
        return int(row[0])

    def stage(self, conn: Connection, seq: int, text: str) -> None:
        """Write `text` for `seq` inside the caller's open transaction."""
        conn.execute(STAGE_SQL, (seq, text))

    def staged(self, count: int) -> None:
        """Note `count` rows committed by this process; fold when enough are pending."""
        with self._lock:
            self._staged += count
            due = self._staged >= FLUSH_AT
        if due:
            self.flush()

    def flush(self) -> None:
        """Move every pending row into the FTS index in one transaction (safe across processes).

        A read-only database is left as it is (its newest pending rows are not searched).
        """
        db = self._db
        if db.read_only:
            return
        with db.atomic("IMMEDIATE"):
            conn = db.conn()
            if conn.execute("SELECT 1 FROM events_fts_pending LIMIT 1").fetchone() is None:
                moved = False
            else:
                for sql in _FOLD:
                    conn.execute(sql)
                moved = True
        if moved or self._staged:
            with self._lock:
                self._staged = 0

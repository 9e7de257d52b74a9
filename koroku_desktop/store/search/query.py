"""Full-text search queries over the log's FTS5 index (used by `SqliteEventLog.search`).

Split from the log: the query, the side search over text not yet folded into the index (a
read-only database cannot fold it), and turning rows into `SearchHit`s.
"""

from __future__ import annotations

import json

from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.store.database import Connection
from koroku_desktop.store.log.rows import Row

SEARCH_SQL = (
    "SELECT e.seq, e.conversation_id, e.created_at, e.kind, CAST(e.payload AS BLOB),"
    " snippet(events_fts, 0, '[[', ']]', '…', 16)"
    " FROM events_fts JOIN events AS e ON e.seq = events_fts.rowid"
    " WHERE events_fts MATCH ? ORDER BY events_fts.rowid DESC LIMIT ?"
)
"""Rows (seq, conversation, created_at, kind, payload, snippet) for (match, limit)."""


def pending_rows(conn: Connection, match: str, limit: int) -> list[Row]:
    """Search hits among text not yet folded into the index, through a TEMP FTS table
    (a read-only database still allows those)."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.pending_fts USING fts5(body)")
    conn.execute("DELETE FROM temp.pending_fts")
    conn.execute(
        "INSERT INTO temp.pending_fts (rowid, body) SELECT seq, body FROM events_fts_pending"
    )
    rows: list[Row] = conn.execute(
        SEARCH_SQL.replace("events_fts", "pending_fts"), (match, limit)
    ).fetchall()
    return rows


def search_hits(rows: list[Row]) -> list[SearchHit]:
    """`SEARCH_SQL` rows as search hits."""
    return [
        SearchHit(
            seq=int(seq),
            conversation_id=str(conversation_id),
            created_at=float(created_at),
            kind=str(kind),
            role=role_of(payload),
            snippet=str(snippet),
        )
        for seq, conversation_id, created_at, kind, payload, snippet in rows
    ]


def role_of(payload: bytes | str) -> str | None:
    """The `role` of an event's JSON payload (None for non-messages and damaged bytes)."""
    try:
        data = json.loads(payload)
    except ValueError:  # bad JSON or bad UTF-8 (UnicodeDecodeError is a ValueError)
        return None
    role = data.get("role") if isinstance(data, dict) else None
    return role if isinstance(role, str) else None

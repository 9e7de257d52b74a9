"""The `task` events of a log file, read without the event log: a read-only connection,
the rows' JSON parsed with the standard library (no pydantic, no Peewee model), one index
lookup a conversation. What `koroku tasks run-due` reads first: when nothing is due it
exits without loading anything else. A row it cannot read as a task record makes it say
so (None): the caller reads the log the full way then.
"""

from __future__ import annotations

import json
from pathlib import Path

from koroku_desktop.domain.log_order import order_key
from koroku_desktop.domain.task_records import TaskRecord, record_from_payload
from koroku_desktop.store.database import SQL_ERRORS, Connection, connect, read_only_uri

_FIRST = "SELECT MIN(conversation_id) FROM events"
_NEXT = "SELECT MIN(conversation_id) FROM events WHERE conversation_id > ?"
_ROWS = (
    "SELECT seq, created_at, payload, hub_seq FROM events"
    " WHERE conversation_id = ? AND kind = 'task' ORDER BY seq"
)


def read_task_records(path: Path) -> list[TaskRecord] | None:
    """Every `task` event of the log at `path` (none for a missing file); None when a row
    or the file cannot be read this way."""
    if not path.exists():
        return []
    try:
        conn = connect(read_only_uri(path), uri=True)
    except SQL_ERRORS:
        return None
    try:
        return _records(conn)
    except SQL_ERRORS:
        return None
    finally:
        conn.close()


def _records(conn: Connection) -> list[TaskRecord] | None:
    found: list[TaskRecord] = []
    row = conn.execute(_FIRST).fetchone()
    while row is not None and row[0] is not None:
        conversation_id = str(row[0])
        for seq, created_at, payload, hub_seq in conn.execute(_ROWS, (conversation_id,)):
            order = order_key(int(seq), None if hub_seq is None else int(hub_seq))
            try:
                data = json.loads(payload)
            except (TypeError, ValueError):
                return None
            record = record_from_payload(data, conversation_id, float(created_at), order)
            if record is None:
                return None
            found.append(record)
        row = conn.execute(_NEXT, (conversation_id,)).fetchone()
    return found

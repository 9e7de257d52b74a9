"""Import the tutorial's SessionManager database into our event log.

Accepted input: a SQLite file with a table `messages` (or the first table that has a JSON
payload column). Columns are detected by name:

- order: `id` / `seq` / `message_id` (else the rowid); rows are imported in that order;
- payload: `payload` / `content` / `data` / `message` / `json` / `event`;
- session (optional): `session_id` / `session` / `conversation_id`, used by `session_id=`.

Payload shapes (JSON text, also double-encoded JSON strings):

- newer rows: `{"event_type": "message", "content": {"role": ..., "parts": [...]}}` and
  `{"event_type": "compaction", "summary": "..."}`;
- older rows with no `event_type`: the SDK Content JSON itself, `{"role": "user", "parts": [...]}`.

Roles `user`/`model` are kept; `function`/`tool` become `user`, `assistant` becomes `model`.
Parts are google-genai Part JSON in snake_case or camelCase (see `tutorial_parts`); thought
signatures in standard or URL-safe base64 are stored as standard base64 of the same bytes.
A tutorial compaction becomes a `CompactionEvent` covering the rows imported before it
(`covers_up_to_seq` = the last of them, `kept_from_seq` just past it). Rows that cannot be
parsed are skipped and reported; the import is one transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from koroku_desktop.domain.events import CompactionEvent, Event, MessageEvent, Role
from koroku_desktop.domain.projection import Fix, log_fixes
from koroku_desktop.maintenance.tutorial_parts import part_from_json
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.database import Connection, connect

ORDER_COLUMNS = ("id", "seq", "message_id")
PAYLOAD_COLUMNS = ("payload", "content", "data", "message", "json", "event")
SESSION_COLUMNS = ("session_id", "session", "conversation_id")
ROLES: dict[str, Role] = {
    "user": "user",
    "model": "model",
    "function": "user",
    "tool": "user",
    "assistant": "model",
}


@dataclass(frozen=True)
class ImportReport:
    """What an import did: rows turned into events, rows skipped, and why they were skipped."""

    imported: int
    skipped: int
    errors: list[str] = field(default_factory=list)
    repairs: list[Fix] = field(default_factory=list)
    """Call/response problems the projection repairs in every request (the log keeps them)."""


class _Skip(ValueError):
    """This row cannot be imported."""


def _pick(columns: list[str], wanted: tuple[str, ...]) -> str | None:
    lowered = {c.lower(): c for c in columns}
    return next((lowered[w] for w in wanted if w in lowered), None)


def _find_table(conn: Connection) -> tuple[str, list[str]] | None:
    names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    ordered = sorted(names, key=lambda n: n.lower() != "messages")
    for name in ordered:
        columns = [str(r[1]) for r in conn.execute(f'PRAGMA table_info("{name}")')]
        if _pick(columns, PAYLOAD_COLUMNS) is not None:
            return name, columns
    return None


def _load_json(text: Any) -> Any:
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Skip(f"payload is not UTF-8 text: {exc}") from exc
    if not isinstance(text, str):
        raise _Skip(f"payload is {type(text).__name__}, not JSON text")
    try:
        data = json.loads(text, parse_constant=_no_constants)
        if isinstance(data, str):  # double-encoded
            data = json.loads(data)
    except ValueError as exc:
        raise _Skip(f"bad JSON: {exc}") from exc
    return data


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _message(content: Any) -> MessageEvent:
    if not isinstance(content, dict):
        raise _Skip("content is not an object")
    role = ROLES.get(str(content.get("role") or "user").lower())
    if role is None:
        raise _Skip(f"unknown role {content.get('role')!r}")
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        raise _Skip("content has no parts")
    try:
        return MessageEvent(role=role, parts=[part_from_json(p) for p in parts], origin="import")
    except ValueError as exc:
        raise _Skip(str(exc)) from exc


def row_to_event(payload: Any, covers_up_to_seq: int) -> Event:
    """One tutorial payload -> our event; compactions cover up to `covers_up_to_seq`."""
    data = _load_json(payload)
    if not isinstance(data, dict):
        raise _Skip("payload is not a JSON object")
    kind = data.get("event_type") or data.get("type")
    if kind is None:
        return _message(data)
    if kind == "message":
        return _message(data.get("content", data.get("message")))
    if kind == "compaction":
        summary = data.get("summary")
        if not isinstance(summary, str):
            raise _Skip("compaction without a summary")
        return CompactionEvent(
            summary=summary, covers_up_to_seq=covers_up_to_seq, kept_from_seq=covers_up_to_seq + 1
        )
    raise _Skip(f"unknown event_type {kind!r}")


def import_tutorial_db(
    src: Path, log: SqliteEventLog, conversation_id: str, *, session_id: str | None = None
) -> ImportReport:
    """Copy the tutorial's `messages` rows into `conversation_id`, in order, tolerantly.

    `session_id` keeps only that session's rows (default: all rows). Never raises for a bad
    row; raises `Error` only if `src` is not a readable SQLite database.
    """
    conn = connect(f"{Path(src).resolve().as_uri()}?mode=ro", uri=True)
    try:
        found = _find_table(conn)
        if found is None:
            return ImportReport(0, 0, [f"{src}: no table with a payload column"])
        table, columns = found
        payload_col = _pick(columns, PAYLOAD_COLUMNS)
        order_col = _pick(columns, ORDER_COLUMNS) or "rowid"
        session_col = _pick(columns, SESSION_COLUMNS)
        # The payload is read as bytes: a row that is not UTF-8 is skipped, not fatal.
        sql = f'SELECT "{order_col}", CAST("{payload_col}" AS BLOB) FROM "{table}"'
        params: tuple[str, ...] = ()
        if session_id is not None and session_col is not None:
            sql += f' WHERE "{session_col}" = ?'
            params = (session_id,)
        rows = conn.execute(sql + f' ORDER BY "{order_col}"', params).fetchall()
    finally:
        conn.close()

    imported, errors = 0, []
    written: list[tuple[int, object]] = []
    with log.batch():
        last_seq = log.last_seq()
        for row_id, payload in rows:
            try:
                event = row_to_event(payload, covers_up_to_seq=last_seq)
            except _Skip as exc:
                errors.append(f"row {row_id}: {exc}")
                continue
            (stored,) = log.append(conversation_id, [event])
            written.append((stored.seq, stored.event))
            last_seq = stored.seq
            imported += 1
    return ImportReport(imported, len(errors), errors, log_fixes(written))

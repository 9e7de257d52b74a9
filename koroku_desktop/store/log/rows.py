"""Turning `events` rows into log entries; a row that cannot be parsed becomes damaged."""

from __future__ import annotations

import json
from typing import Any

from koroku_desktop.domain.events import SCHEMA_VERSION, DamagedEvent, LogEntry, StoredEvent
from koroku_desktop.domain.ids import legacy_id
from koroku_desktop.domain.upcasting import UpcastError, upcast

COLUMNS = (
    "seq, conversation_id, kind, schema_version, CAST(payload AS BLOB), created_at,"
    " event_id, turn_id, writer, hub_seq"
)
"""The column list every entry query selects, in the order `parse_row` expects.

The payload is read as bytes and decoded here: sqlite3 would raise on a row that is not
UTF-8 and stop the whole read, where it must only be one damaged row.
"""

Row = tuple[Any, ...]


def decode_payload(payload: Any) -> str:
    """The payload as text for display: bad UTF-8 bytes become replacement characters."""
    if isinstance(payload, bytes | bytearray | memoryview):
        return bytes(payload).decode("utf-8", errors="replace")
    return payload if isinstance(payload, str) else repr(payload)


def _payload_dict(payload: Any) -> dict[str, Any]:
    if isinstance(payload, bytes | bytearray | memoryview):
        payload = bytes(payload).decode("utf-8")
    if not isinstance(payload, str):
        raise UpcastError(f"payload is {type(payload).__name__}, not JSON text")
    data = json.loads(payload)
    if not isinstance(data, dict):
        raise UpcastError("payload is not a JSON object")
    return data


def parse_row(row: Row) -> LogEntry:
    """A stored event, or a DamagedEvent for bad JSON, unknown kinds or newer schemas.

    Never raises: the log must stay readable whatever one row holds.
    """
    seq, conversation_id, kind, version, payload, created_at, *identity = row
    try:
        if version is not None and int(version) > SCHEMA_VERSION:
            raise UpcastError(  # noqa: TRY301 — one more kind of damage, handled with the rest
                f"schema_version {version} is newer than this Koroku understands"
            )
        event = upcast(str(kind), _payload_dict(payload))
    except Exception as exc:  # noqa: BLE001 — any failure of one row is damage, never fatal
        return DamagedEvent(
            seq=int(seq),
            conversation_id=str(conversation_id),
            created_at=_float(created_at),
            kind=str(kind),
            raw=decode_payload(payload),
            error=f"{type(exc).__name__}: {exc}",
        )
    event_id, turn_id, writer = row_identity(seq, created_at, decode_payload(payload), identity)
    hub_seq = identity[3] if len(identity) > 3 else None
    return StoredEvent(
        seq=int(seq),
        conversation_id=str(conversation_id),
        created_at=_float(created_at),
        event=event,
        event_id=event_id,
        turn_id=turn_id,
        writer=writer,
        hub_seq=_position(hub_seq),
    )


def row_identity(seq: Any, created_at: Any, payload: Any, identity: list[Any]) -> tuple[str, ...]:
    """(event_id, turn_id, writer) of a row; a row without ids (inserted by an old Koroku or
    a raw import) gets its deterministic legacy id, which is also its own turn."""
    event_id, turn_id, writer = [*identity, None, None, None][:3]
    if not event_id:
        event_id = legacy_id(_float(created_at), seq, payload)
    return str(event_id), str(turn_id or event_id), str(writer or "")


def _position(value: Any) -> int | None:
    """A hub position as stored (None when unsynced or unreadable: then it sorts by seq)."""
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0

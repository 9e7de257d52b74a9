"""A `task` event as the fold reads it, without pydantic: from a parsed `TaskEvent`, or
straight from a row's JSON (what `koroku tasks run-due` reads first, to start in a few
milliseconds when nothing is due). A payload of another shape or a newer version is None:
the caller then reads the log the full way."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from koroku_desktop.domain.events import StoredEvent

TASK_SCHEMA = 1
"""The `task` payload version these records read (the events' `SCHEMA_VERSION` when written)."""


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One `task` event with where it stands: `order` is its place in the log's one order
    (`StoredEvent.order_key`), `stored_at` when it was written."""

    conversation_id: str
    stored_at: float
    order: int
    action: str
    task_id: str
    title: str | None = None
    prompt: str | None = None
    reminder: bool | None = None
    schedule_kind: str | None = None
    schedule_rule: str | None = None
    schedule_tz: str | None = None
    schedule_start: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    tool_budget: int | None = None
    device: str | None = None
    due: str | None = None
    at: str | None = None
    outcome: str | None = None
    run_turn_id: str | None = None
    late: bool | None = None
    detail: str | None = None


_PLACE = {"conversation_id", "stored_at", "order"}
_TYPES: dict[str, tuple[type, ...]] = {"reminder": (bool,), "late": (bool,), "tool_budget": (int,)}
EVENT_FIELDS = tuple(f.name for f in fields(TaskRecord) if f.name not in _PLACE)


def record_of(stored: StoredEvent) -> TaskRecord | None:
    """The record of a stored `task` event (None for any other event)."""
    event = stored.event
    if event.kind != "task":
        return None
    values = {name: getattr(event, name) for name in EVENT_FIELDS}
    if values["allowed_tools"] is not None:
        values["allowed_tools"] = tuple(values["allowed_tools"])
    return TaskRecord(stored.conversation_id, stored.created_at, stored.order_key, **values)


def record_from_payload(
    payload: Any, conversation_id: str, stored_at: float, order: int
) -> TaskRecord | None:
    """The record of a row's JSON payload; None when it is not a `task` payload this
    version reads (the full parse then decides: damaged, or newer)."""
    if not isinstance(payload, dict) or payload.get("kind", "task") != "task":
        return None
    if payload.get("schema_version", 1) != TASK_SCHEMA:
        return None
    if set(payload) - {*EVENT_FIELDS, "kind", "schema_version"}:
        return None
    values: dict[str, Any] = {}
    for name in EVENT_FIELDS:
        value = payload.get(name)
        if name == "allowed_tools" and value is not None:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return None
            value = tuple(value)
        elif value is not None and not isinstance(value, _TYPES.get(name, (str,))):
            return None
        values[name] = value
    if not isinstance(values["action"], str) or not isinstance(values["task_id"], str):
        return None
    return TaskRecord(conversation_id, stored_at, order, **values)

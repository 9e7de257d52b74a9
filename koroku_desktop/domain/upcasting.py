"""Reading a stored payload of any schema version: each kind's chain of upcasters runs it
up to the current shape, and the event union parses it (domain/events.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from koroku_desktop.domain.events import EVENT_ADAPTER, EVENT_KINDS, SCHEMA_VERSION, Event


class UpcastError(ValueError):
    """A payload that no known shape matches."""


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
"""One step of a kind's chain: a version-n payload in, the same event as version n+1 out."""

UPCASTERS: dict[str, dict[int, Upcaster]] = {kind: {} for kind in EVENT_KINDS}
"""Per kind, `{n: step from version n to n+1}`. Append a step whenever a payload's shape
changes (and bump SCHEMA_VERSION); never edit a shipped step. Version 1 is the first shape:
fields added later with defaults (`origin`, `usage`, `tokens_before`...) need no step."""


def upcast_payload(
    kind: str,
    payload: Mapping[str, Any],
    *,
    chain: Mapping[int, Upcaster] | None = None,
    current: int = SCHEMA_VERSION,
) -> dict[str, Any]:
    """Run `payload` (any known version) through its kind's chain up to `current`.

    A payload without `schema_version` is version 1 (the first shape). Raises `UpcastError`
    for a version newer than `current` or a gap in the chain.
    """
    steps = UPCASTERS.get(kind, {}) if chain is None else chain
    data = dict(payload)
    data.setdefault("kind", kind)
    if data["kind"] != kind:
        raise UpcastError(f"payload kind {data['kind']!r} does not match row kind {kind!r}")
    try:
        version = int(data.get("schema_version", 1))
    except (TypeError, ValueError) as exc:
        raise UpcastError(f"bad schema_version {data.get('schema_version')!r}") from exc
    if version > current:
        raise UpcastError(f"schema_version {version} is newer than this Koroku understands")
    if version < 1:
        raise UpcastError(f"schema_version {version} never existed")
    while version < current:
        step = steps.get(version)
        if step is None:
            raise UpcastError(f"no upcaster for {kind} v{version} -> v{version + 1}")
        data = step(data)
        version += 1
        data["schema_version"] = version
    data["schema_version"] = current
    return data


def upcast(kind: str, payload: dict[str, Any]) -> Event:
    """Parse a stored payload of any known schema version into the current event model."""
    if kind not in EVENT_KINDS:
        raise UpcastError(f"unknown event kind {kind!r}")
    data = upcast_payload(kind, payload)
    try:
        return EVENT_ADAPTER.validate_python(data)
    except ValueError as exc:
        raise UpcastError(str(exc)) from exc

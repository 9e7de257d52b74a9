"""Checks an export must pass before anything is written: a total function over any JSON.

`load_export_json` parses without trusting the input (no NaN or Infinity, no number too large
for a float, no nesting past `MAX_DEPTH`, no lone surrogates), and `check_record` checks one
event record's fields and types, so an import either writes every event or refuses with one
line saying where and why (`ExportFormatError`), never a traceback.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from koroku_desktop.domain.errors import KorokuError


class ExportFormatError(KorokuError, ValueError):
    """The file is not a Koroku export this version can read."""


MAX_SEQ = 1 << 50
"""The highest seq an import may bring: far beyond any real log, far below SQLite's limit."""
MAX_TIMESTAMP = 253_402_300_799.0  # 9999-12-31
MAX_DEPTH = 100
"""The deepest nesting of arrays and objects an export may hold (Koroku writes a handful of
levels; a model's tool arguments a few more): deeper input is refused, never recursed into."""
MAX_SCHEMA_VERSION = 1 << 31
_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    """A JSON number as a float, refused when it does not fit one (`1e999` is not infinity)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large")
    return value


def _where(path: list[str | int]) -> str:
    shown = "".join(f"[{p}]" if isinstance(p, int) else _step(p[:40]) for p in path[:6])
    return shown.lstrip(".") or "the top level"


def _step(name: str) -> str:
    """`.name`, or `["\\n"]` (JSON-escaped) for a name a message cannot show as it is: the
    error stays one line whatever the file's names hold."""
    plain = name.isprintable() and name == name.strip() and name != ""
    return f".{name}" if plain else f"[{json.dumps(name)}]"


def check_json_tree(data: Any, max_depth: int = MAX_DEPTH) -> None:
    """Refuse (`ExportFormatError`) nesting deeper than `max_depth` and text that is not
    Unicode (a lone surrogate such as `\\ud800`, which no file or database can hold), with
    where it is. Walks with its own stack, so no input can exhaust Python's."""
    stack: list[tuple[Any, list[str | int]]] = [(data, [])]
    while stack:
        value, path = stack.pop()
        if len(path) > max_depth:
            raise ExportFormatError(
                f"the export nests deeper than {max_depth} levels (at {_where(path)})"
            )
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise ExportFormatError(
                    f"text at {_where(path)} is not valid Unicode (a lone surrogate escape)"
                )
        elif isinstance(value, dict):
            for key, item in value.items():
                if _SURROGATE.search(key):
                    raise ExportFormatError(
                        f"a name at {_where(path)} is not valid Unicode (a lone surrogate escape)"
                    )
                stack.append((item, [*path, key]))
        elif isinstance(value, list):
            stack.extend((item, [*path, n]) for n, item in enumerate(value))


def load_export_json(text: str, name: str) -> Any:
    """The JSON value of an export's text, checked as above; raises `ExportFormatError`."""
    try:
        data = json.loads(text, parse_constant=_no_constants, parse_float=_finite)
    except ValueError as exc:
        raise ExportFormatError(f"cannot read {name}: {exc}") from None
    except RecursionError:
        raise ExportFormatError(
            f"cannot read {name}: it nests deeper than {MAX_DEPTH} levels"
        ) from None
    check_json_tree(data, MAX_DEPTH + 3)  # the export object, its events list, one event
    return data


def check_record(n: int, record: Any, last_seq: int) -> None:
    """Refuse (`ExportFormatError`) an event record this version cannot import whole."""
    if not isinstance(record, dict):
        raise ExportFormatError(f"event {n} is not an object")
    seq = record.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq <= last_seq:
        raise ExportFormatError(f"event {n}: seq must be an integer above {last_seq}")
    if seq > MAX_SEQ:
        raise ExportFormatError(
            f"event {n}: seq {seq} is too large (at most {MAX_SEQ:,}); it would leave no room "
            "for new events"
        )
    if not isinstance(record.get("conversation_id"), str) or not isinstance(
        record.get("kind"), str
    ):
        raise ExportFormatError(f"event {n} (seq {seq}): missing conversation_id or kind")
    created = record.get("created_at")
    if not isinstance(created, int | float) or isinstance(created, bool):
        raise ExportFormatError(f"event {n} (seq {seq}): created_at must be a number")
    if not math.isfinite(created) or not 0 <= created <= MAX_TIMESTAMP:
        raise ExportFormatError(
            f"event {n} (seq {seq}): created_at {created!r} is not a time (seconds since 1970)"
        )
    if record.get("damaged"):
        if not isinstance(record.get("payload_raw"), str):
            raise ExportFormatError(f"event {n} (seq {seq}): damaged without payload_raw")
        return
    payload = record.get("payload")
    if not isinstance(payload, dict):
        raise ExportFormatError(f"event {n} (seq {seq}): payload must be an object")
    for where, holder in (("schema_version", record), ("payload's schema_version", payload)):
        version = holder.get("schema_version")
        if version is None:
            continue
        if (
            not isinstance(version, int)
            or isinstance(version, bool)
            or not 1 <= version < MAX_SCHEMA_VERSION
        ):
            raise ExportFormatError(
                f"event {n} (seq {seq}): {where} must be a whole number from 1, not {version!r:.40}"
            )


def _finite_only(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite_only(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_only(v) for v in value]
    return value


def strict_json(value: Any, **options: Any) -> str:
    """`json.dumps` that always writes valid JSON: a NaN or Infinity (a row stored by an older
    Koroku) is written as null instead of the invalid `NaN`/`Infinity`."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:
        return json.dumps(_finite_only(value), allow_nan=False, **options)

"""google-genai Part JSON (snake_case or camelCase) -> our parts, as plain dict code.

The store never imports google.genai: the tutorial's rows are JSON, and this maps that JSON.
Keys with null values are ignored (`model_dump()` writes every field). A part whose shape is
not fully understood becomes `UnknownPart(raw=...)`, so nothing is silently dropped.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from koroku_desktop.domain.parts import PART_ADAPTER, Part, TextPart, UnknownPart

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")

# For each part kind: the fields we map (snake_case) inside the nested object.
_NESTED_FIELDS: dict[str, frozenset[str]] = {
    "function_call": frozenset({"name", "args", "id"}),
    "function_response": frozenset({"name", "response", "id"}),
    "inline_data": frozenset({"mime_type", "data"}),
    "file_data": frozenset({"mime_type", "file_uri"}),
    "executable_code": frozenset({"language", "code"}),
    "code_execution_result": frozenset({"outcome", "output"}),
}

_STRING_FIELDS = frozenset({"file_uri", "code"})
"""Nested fields taken as text whatever JSON type they hold."""


class PartShapeError(ValueError):
    """A part that is not even a JSON object."""


def snake(key: str) -> str:
    """`thoughtSignature` -> `thought_signature`; snake_case keys pass unchanged."""
    return _CAMEL.sub("_", key).lower()


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    return {snake(k): v for k, v in obj.items() if v is not None}


def standard_base64(value: str) -> str:
    """Standard or URL-safe base64 (padding optional) -> standard padded base64."""
    text = value.strip()
    alt = b"-_" if ("-" in text or "_" in text) else None
    padded = text + "=" * (-len(text) % 4)
    try:
        raw = base64.b64decode(padded, altchars=alt, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"not base64: {value[:40]!r}") from exc
    return base64.b64encode(raw).decode("ascii")


def _unknown(raw: dict[str, Any], signature: str | None) -> UnknownPart:
    return UnknownPart(raw=raw, thought_signature=signature)


def part_from_json(raw: Any) -> Part:
    """Map one SDK Part JSON object to our part; anything unfamiliar is kept as unknown."""
    if not isinstance(raw, dict):
        raise PartShapeError(f"part is {type(raw).__name__}, not an object")
    fields = _clean(raw)
    signature: str | None = None
    if "thought_signature" in fields:
        sig = fields.pop("thought_signature")
        try:
            signature = standard_base64(str(sig))
        except ValueError:
            return _unknown(raw, None)
    thought = fields.pop("thought", False)
    if "text" in fields and set(fields) == {"text"} and isinstance(fields["text"], str):
        return TextPart(text=fields["text"], thought=bool(thought), thought_signature=signature)
    if len(fields) != 1 or thought:
        return _unknown(raw, signature)
    ((key, nested),) = fields.items()
    allowed = _NESTED_FIELDS.get(key)
    if allowed is None or not isinstance(nested, dict):
        return _unknown(raw, signature)
    data = _clean(nested)
    if not set(data) <= allowed:
        return _unknown(raw, signature)
    try:
        return _build(key, data, signature)
    except (KeyError, ValueError, TypeError):
        return _unknown(raw, signature)


def _build(key: str, data: dict[str, Any], signature: str | None) -> Part:
    """The part of kind `key` from its nested fields (already checked against `_NESTED_FIELDS`).

    The domain's part union builds and validates it; only the inline bytes are normalised to
    standard base64, and a file's URI and a code's text are taken as strings.
    """
    fields = {**data, "kind": key, "thought_signature": signature}
    if key == "inline_data":
        fields["data"] = standard_base64(str(data.get("data", "")))
    for name in _STRING_FIELDS.intersection(data):
        fields[name] = str(data[name])
    return PART_ADAPTER.validate_python(fields)

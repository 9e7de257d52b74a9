"""The fields of an MCP elicitation form: their choices, and typed answers from text.

Shared by the terminal prompt and the window's card (no SDK, no Qt): a requested schema's
flat properties (string, number, integer, boolean, enums, arrays of enums) and the checks a
person's answer must pass (type, range, one of the choices).
"""

from __future__ import annotations

from typing import Any

TRUE_WORDS, FALSE_WORDS = {"y", "yes", "true", "1", "on"}, {"n", "no", "false", "0", "off"}


def choices(prop: dict[str, Any]) -> list[tuple[str, str]]:
    """(value, label) of an enum, a oneOf of consts, or an array of either."""
    source = prop.get("items", prop) if prop.get("type") == "array" else prop
    if isinstance(source.get("enum"), list):
        return [(str(v), str(v)) for v in source["enum"]]
    options = source.get("oneOf") or source.get("anyOf") or []
    return [(str(o["const"]), str(o.get("title", o["const"]))) for o in options if "const" in o]


def pick(word: str, options: list[tuple[str, str]]) -> str:
    """The value `word` names: the value itself, its label, or its number (from 1)."""
    for i, (value, label) in enumerate(options, 1):
        if word in (value, str(i)) or word.lower() == label.lower():
            return value
    raise ValueError(f"choose one of: {', '.join(label for _, label in options)}")


def convert(raw: str, prop: dict[str, Any]) -> Any:
    """One typed answer for a field of the requested schema; ValueError says what is wrong."""
    kind = prop.get("type", "string")
    options = choices(prop)
    if kind == "array":
        values = [pick(w.strip(), options) if options else w.strip() for w in raw.split(",")]
        return [v for v in values if v]
    if options:
        return pick(raw, options)
    if kind == "boolean":
        if raw.lower() in TRUE_WORDS | FALSE_WORDS:
            return raw.lower() in TRUE_WORDS
        raise ValueError("answer yes or no")
    if kind in ("integer", "number"):
        try:
            number = int(raw) if kind == "integer" else float(raw)
        except ValueError:
            raise ValueError("a whole number" if kind == "integer" else "a number") from None
        low, high = prop.get("minimum"), prop.get("maximum")
        if (low is not None and number < low) or (high is not None and number > high):
            raise ValueError(f"between {low} and {high}")
        return number
    return raw

"""The searchable text of an event: what the full-text index holds for it.

Message text (thoughts included), function calls (name + args), function responses (name +
response JSON), code the model ran and its output, and compaction summaries. Binary parts
(inline data, file references) have no text. One event's text is capped so that a huge tool
result cannot make an append slow.
"""

from __future__ import annotations

import json
from typing import Any

from koroku_desktop.domain.events import CompactionEvent, Event, MessageEvent
from koroku_desktop.domain.parts import (
    CodeExecutionResultPart,
    ExecutableCodePart,
    FunctionCallPart,
    FunctionResponsePart,
    Part,
    TextPart,
)

MAX_SEARCHABLE_CHARS = 200_000


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def part_text(part: Part) -> str:
    """The searchable text of one part ('' for parts without text)."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, FunctionCallPart):
        return f"{part.name} {_json(part.args)}"
    if isinstance(part, FunctionResponsePart):
        return f"{part.name} {_json(part.response)}"
    if isinstance(part, ExecutableCodePart):
        return part.code
    if isinstance(part, CodeExecutionResultPart):
        return part.output or ""
    return ""


def searchable_text(event: Event) -> str:
    """The text indexed for `event`, capped at MAX_SEARCHABLE_CHARS ('' means not indexed)."""
    if isinstance(event, MessageEvent):
        text = "\n".join(t for t in (part_text(p) for p in event.parts) if t)
    elif isinstance(event, CompactionEvent):
        text = event.summary
    else:
        text = ""
    return text[:MAX_SEARCHABLE_CHARS]


def fts_query(user_text: str) -> str | None:
    """Turn any user text into a safe FTS5 query: every token quoted, all tokens required.

    A token ending in `*` stays a prefix search. Tokens with no letter or digit are dropped
    (the tokenizer would ignore them anyway). None means there is nothing to search for.
    """
    terms: list[str] = []
    for token in user_text.split():
        prefix = token.endswith("*")
        core = token.rstrip("*") if prefix else token
        if not any(ch.isalnum() for ch in core):
            continue
        quoted = '"' + core.replace('"', '""') + '"'
        terms.append(quoted + "*" if prefix else quoted)
    return " ".join(terms) if terms else None

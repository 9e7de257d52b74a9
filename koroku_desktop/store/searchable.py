"""The searchable text of an event: what the full-text index holds for it.

Message text (thoughts included), function calls (name + args), function responses (name,
the word `failed` when the call failed, response JSON), code the model ran and its output,
and compaction summaries. Binary parts (inline data, file references) have no text. One
event's text is capped so that a huge tool result cannot make an append slow.
"""

from __future__ import annotations

from typing import assert_never

from koroku_desktop.domain.events import Event
from koroku_desktop.render import blocks as b
from koroku_desktop.render.fold import event_blocks
from koroku_desktop.render.text import compact_json

MAX_SEARCHABLE_CHARS = 200_000


def block_text(block: b.Block) -> str:
    """The searchable text of one block ('' for blocks without text)."""
    match block:
        case b.TextBlock(text=text) | b.ThoughtBlock(text=text) | b.CodeBlock(text=text):
            return text
        case b.ToolCallBlock(name=name, args=args):
            return f"{name} {compact_json(args)}"
        case b.ToolResultBlock(name=name, response=response, failed=failed):
            return f"{name} {'failed ' if failed else ''}{compact_json(response)}"
        case b.CompactionBlock(summary=summary):
            return summary
        case b.NoticeBlock() | b.RejectedBlock():
            return ""
        case b.AttachmentBlock() | b.UnknownBlock() | b.ClearedBlock() | b.DamagedBlock():
            return ""
        case _:
            assert_never(block)


def searchable_text(event: Event) -> str:
    """The text indexed for `event`, capped at MAX_SEARCHABLE_CHARS ('' means not indexed)."""
    text = "\n".join(t for t in (block_text(x) for x in event_blocks(event)) if t)
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

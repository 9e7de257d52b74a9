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
        case b.SourcesBlock(sources=sources, queries=queries):
            return " ".join([*queries, *(f"{s.title} {s.site}" for s in sources)])
        case b.MemoryEditBlock(text=text, source=source):
            # a compaction's summary is indexed with the compaction
            return "" if source == "compaction" else text
        case b.NoticeBlock() | b.RejectedBlock() | b.RememberedBlock() | b.SupersededBlock():
            # remembered passages are indexed where they were said
            return ""
        case b.AttachmentBlock(name=name):
            return name  # an attached file is found by its name
        case b.UnknownBlock() | b.ClearedBlock() | b.DamagedBlock():
            return ""
        case b.DismissedBlock():
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


QUESTION_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
"""Words too common to rank by: left out of `fts_any_query` (the hybrid search's keyword leg)."""


def fts_any_query(user_text: str) -> str | None:
    """An FTS5 query matching ANY of the text's words (common ones left out), for BM25 ranking.

    A natural question ("what colour is my car?") rarely has every word in one event; ranked
    by BM25, events with the rarer words come first. None when nothing is left to search for.
    """
    words: dict[str, None] = {}
    for token in user_text.split():
        core = "".join(ch for ch in token if ch.isalnum() or ch in "-_'").strip("-_'")
        if core and core.lower() not in QUESTION_WORDS:
            words['"' + core.replace('"', '""') + '"'] = None
    return " OR ".join(words) if words else None

"""The searchable text of an event: what the full-text index holds for it.

Each part says what it gives (`Part.search_text`: message text with thoughts, a call's name
and args, a response's name, `failed` and JSON, code and its output, an attached file's
name; binary parts nothing), a grounded reply adds its sources, and any other event gives
what its marker says (a compaction's summary). One event's text is capped so that a huge
tool result cannot make an append slow.
"""

from __future__ import annotations

import re

from koroku_desktop.domain.events import Event, MessageEvent
from koroku_desktop.render.citations import sources_block
from koroku_desktop.render.fold import said_parts
from koroku_desktop.render.markers import event_marker
from koroku_desktop.store.search.stop_words import STOP_WORDS

MAX_SEARCHABLE_CHARS = 200_000
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
"""A word of the ranked query: letters and digits, with the apostrophes inside it ("don't",
"Maria's"); anything else splits words, as the index's tokenizer splits the text."""


def searchable_text(event: Event) -> str:
    """The text indexed for `event`, capped at MAX_SEARCHABLE_CHARS ('' means not indexed):
    each part's own `search_text`, the sources a reply was grounded on, or what its marker
    gives to search."""
    if isinstance(event, MessageEvent):
        texts = [part.search_text() for part in said_parts(event)]
        sources = sources_block(event.grounding) if event.grounding is not None else None
        if sources is not None:
            texts.append(sources.search_text())
    else:
        marker = event_marker(event)
        texts = [marker.search_text] if marker is not None else []
    return "\n".join(t for t in texts if t)[:MAX_SEARCHABLE_CHARS]


def fts_query(user_text: str) -> str | None:
    """Turn any user text into a safe FTS5 query: every token quoted, all tokens required.

    A token ending in `*` stays a prefix search. Tokens with no letter or digit are dropped
    (the tokenizer would ignore them anyway). None means there is nothing to search for.
    """
    terms: list[str] = []
    # A NUL ends FTS5's query text (an "unterminated string" error): it splits, as a space.
    for token in user_text.replace("\x00", " ").split():
        prefix = token.endswith("*")
        core = token.rstrip("*") if prefix else token
        if not any(ch.isalnum() for ch in core):
            continue
        quoted = '"' + core.replace('"', '""') + '"'
        terms.append(quoted + "*" if prefix else quoted)
    return " ".join(terms) if terms else None


def fts_any_query(user_text: str) -> str | None:
    """An FTS5 query matching ANY of the text's words (stop words left out), for BM25 ranking.

    A natural question ("what colour is my car?") rarely has every word in one event; ranked
    by BM25, events with the rarer words come first. The words are the index's own tokens
    (letters and digits; any other character splits, as the tokenizer splits the text): so
    "artists/bands" asks for "artists" and "bands", not the word "artistsbands" found
    nowhere, and "self-care" for "self" and "care", ranked as any other two words rather
    than as a phrase. A possessive is its noun ("Maria's" is "Maria": as typed it would be
    the phrase "maria s", found only where written so). None when nothing is left to
    search for.
    """
    words: dict[str, None] = {}
    for word in _WORD.findall(user_text.replace("\u2019", "'")):
        if word.lower() in STOP_WORDS:  # "it's", "let's"
            continue
        if word[-2:].lower() == "'s":
            word = word[:-2]
        if word and word.lower() not in STOP_WORDS:
            words['"' + word + '"'] = None
    return " OR ".join(words) if words else None

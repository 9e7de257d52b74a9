"""What a chat row of sources holds (pure Python, like the rest of `items`): the sources of a
grounded reply as plain values for `SourcesPainter`, and the row's plain text."""

from __future__ import annotations

from typing import Any

from koroku_desktop.render import blocks as b


def sources_item_args(block: b.SourcesBlock) -> dict[str, Any]:
    """What a sources row keeps in `ChatItem.args` to paint from."""
    return {
        "sources": [(s.number, s.title, s.uri, s.site) for s in block.sources],
        "queries": list(block.queries),
        "suggestions": [list(s) for s in block.suggestions],
    }


def sources_summary(block: b.SourcesBlock) -> str:
    """The row's plain text (its tooltip, its copy): `Sources: Title (site), ...`."""
    text = "Sources: " + ", ".join(f"{s.title} ({s.site})" for s in block.sources)
    if block.suggestions:
        text += "; Google Search: " + ", ".join(q for q, _ in block.suggestions)
    return text

"""What of an event is embedded, cut into chunks: the text worth finding by meaning.

Each part says what it gives (`Part.embed_text`: user and model text, not the model's
thoughts; tool results clipped to `TOOL_RESULT_CHARS`), and any other event what its marker
gives (a compaction's summary). A user turn's time note is left out (`said_parts`). Long
texts are cut into overlapping chunks of `CHUNK_CHARS` (about 500 tokens, well under the
model's 2,048-token input), at most `MAX_CHUNKS` per event.
"""

from __future__ import annotations

from koroku_desktop.domain.events import Event, MessageEvent
from koroku_desktop.domain.parts import EMBED_RESULT_CHARS
from koroku_desktop.domain.recall import Chunk
from koroku_desktop.render.fold import said_parts
from koroku_desktop.render.markers import event_marker

TOOL_RESULT_CHARS = EMBED_RESULT_CHARS
CHUNK_CHARS = 2_000
OVERLAP_CHARS = 200
MAX_CHUNKS = 16


def embeddable_text(event: Event) -> str:
    """The text of `event` worth embedding ('' when there is none): each part's own
    `embed_text`, or what its marker gives (a compaction's summary)."""
    if isinstance(event, MessageEvent):
        texts = [part.embed_text() for part in said_parts(event)]
    else:
        marker = event_marker(event)
        texts = [marker.embed_text] if marker is not None else []
    return "\n".join(t for t in (x.strip() for x in texts) if t)


def chunks(seq: int, text: str) -> list[Chunk]:
    """`text` cut into overlapping chunks, preferring to cut at a line or word break."""
    pieces: list[Chunk] = []
    start = 0
    while start < len(text) and len(pieces) < MAX_CHUNKS:
        end = min(len(text), start + CHUNK_CHARS)
        if end < len(text):
            cut = max(text.rfind("\n", start + CHUNK_CHARS // 2, end), text.rfind(" ", start, end))
            end = cut if cut > start + CHUNK_CHARS // 2 else end
        piece = text[start:end].strip()
        if piece:
            pieces.append(Chunk(seq, len(pieces), piece))
        if end >= len(text):
            break
        overlap = max(start + 1, end - OVERLAP_CHARS)
        space = text.find(" ", overlap, end)
        start = space + 1 if space != -1 else overlap  # start the next chunk on a word
    return pieces

"""What of an event is embedded, cut into chunks: the text worth finding by meaning.

User and model text (not the model's thoughts), tool results clipped to `TOOL_RESULT_CHARS`
(a 200 kB file read says little more than its first page), and compaction summaries. A
user turn's time note is left out by the fold. Long texts are cut into overlapping chunks of
`CHUNK_CHARS` (about 500 tokens, well under the model's 2,048-token input), at most
`MAX_CHUNKS` per event.
"""

from __future__ import annotations

from koroku_desktop.domain.events import Event
from koroku_desktop.domain.recall import Chunk
from koroku_desktop.render import blocks as b
from koroku_desktop.render.fold import event_blocks
from koroku_desktop.render.text import compact_json

TOOL_RESULT_CHARS = 1_500
CHUNK_CHARS = 2_000
OVERLAP_CHARS = 200
MAX_CHUNKS = 16


def _block_text(block: b.Block) -> str:
    match block:
        case b.TextBlock(text=text):
            return text
        case b.ToolResultBlock(name=name, response=response):
            return f"{name}: {compact_json(response)[:TOOL_RESULT_CHARS]}"
        case b.CompactionBlock(summary=summary):
            return summary
        case _:
            return ""


def embeddable_text(event: Event) -> str:
    """The text of `event` worth embedding ('' when there is none)."""
    return "\n".join(t for t in (_block_text(x).strip() for x in event_blocks(event)) if t)


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

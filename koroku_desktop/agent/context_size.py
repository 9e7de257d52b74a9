"""How big the live context is, in tokens, without asking the model (for the meter and
for deciding when to compact).

Text counts about four characters a token. Media count what Gemini counts for them, never
the characters of their base64: an attached file by its kind and size, and inline bytes
anywhere in a content (an image the model generated, an MCP tool's image inside a function
response, a file code execution produced, an unknown part's `inlineData`) the same way,
from their decoded size and, for a PNG, GIF, WebP or JPEG, from the picture's own size.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
import weakref
from typing import Any

from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import (
    AttachmentPart,
    FunctionResponsePart,
    InlineDataPart,
    Part,
    UnknownPart,
)

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 258 * 6
"""An image whose size is not known: a full-HD screenshot makes 6 tiles of 258 tokens."""
TILE_TOKENS, TILE_PIXELS, SMALL_IMAGE_PIXELS = 258, 768, 384
"""Gemini counts an image up to 384×384 as 258 tokens, a bigger one 258 a 768×768 tile."""
PDF_PAGE_TOKENS, PDF_PAGE_BYTES = 258, 40_000
"""A PDF: 258 tokens a page; pages guessed from the size."""
AUDIO_BYTES_PER_TOKEN = 500
"""Audio: 32 tokens a second; at 128 kbit/s, a second is 16,000 bytes."""
VIDEO_BYTES_PER_TOKEN = 1_000
"""Video: about 263 tokens a second; at 2 Mbit/s, a second is 250,000 bytes."""
MAX_IMAGE_PIXELS = 3072
"""An image larger than this on its longest side is scaled down to it before tiling."""
HEADER_BASE64_CHARS = 87_384
"""Base64 read to find an image's size (64 KiB of bytes: a JPEG's frame header is early)."""


def media_tokens(mime_type: str, size: int, head: bytes = b"") -> int:
    """What Gemini counts for `size` bytes of `mime_type` (`head`: the first bytes, if known)."""
    kind = mime_type.split("/", 1)[0]
    if kind == "image":
        found = image_size(head)
        if found is None:
            return IMAGE_TOKENS
        width, height = found
        if width <= SMALL_IMAGE_PIXELS and height <= SMALL_IMAGE_PIXELS:
            return TILE_TOKENS
        longest = max(width, height)
        if longest > MAX_IMAGE_PIXELS:  # scaled down to fit first (a bad header too)
            width = max(1, width * MAX_IMAGE_PIXELS // longest)
            height = max(1, height * MAX_IMAGE_PIXELS // longest)
        return TILE_TOKENS * math.ceil(width / TILE_PIXELS) * math.ceil(height / TILE_PIXELS)
    if mime_type == "application/pdf":
        return PDF_PAGE_TOKENS * max(1, size // PDF_PAGE_BYTES)
    if kind == "audio":
        return size // AUDIO_BYTES_PER_TOKEN
    if kind == "video":
        return size // VIDEO_BYTES_PER_TOKEN
    return size // CHARS_PER_TOKEN  # text, source code, JSON...


def image_size(head: bytes) -> tuple[int, int] | None:
    """Width and height from an image's first bytes (PNG, GIF, WebP, JPEG), or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP" and len(head) >= 30:
        if head[12:16] == b"VP8X":
            w = int.from_bytes(head[24:27], "little") + 1
            return w, int.from_bytes(head[27:30], "little") + 1
        if head[12:16] == b"VP8 ":
            w, h = struct.unpack("<HH", head[26:30])
            return w & 0x3FFF, h & 0x3FFF
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        (length,) = struct.unpack(">H", head[at + 2 : at + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def inline_tokens(mime_type: str | None, data: str) -> int:
    """Tokens of inline base64 bytes: by kind from their decoded size, never their characters."""
    size = len(data) * 3 // 4
    data = data.replace("+", "-").replace("/", "_")
    try:
        head = base64.b64decode(data[:HEADER_BASE64_CHARS], altchars=b"-_")  # either alphabet
    except (binascii.Error, ValueError):
        head = b""
    return media_tokens(mime_type or "application/octet-stream", size, head)


def part_tokens(part: Part) -> int:
    """A rough token count of one part: its JSON characters / 4, with media counted by kind
    (an attached file, inline bytes, images inside a function response or an unknown part)."""
    match part:
        case AttachmentPart(mime_type=mime, size=size):
            return media_tokens(mime, size)
        case InlineDataPart(mime_type=mime, data=data):
            return inline_tokens(mime, data)
        case FunctionResponsePart(parts=media) if media:
            text = len(part.model_dump_json(exclude_none=True, exclude={"parts"}))
            return text // CHARS_PER_TOKEN + sum(inline_tokens(m.mime_type, m.data) for m in media)
        case UnknownPart(raw=raw):
            stripped, tokens = _without_inline_data(raw)
            return tokens + len(str(stripped)) // CHARS_PER_TOKEN
        case _:
            return len(part.model_dump_json(exclude_none=True)) // CHARS_PER_TOKEN


def _without_inline_data(value: Any) -> tuple[Any, int]:
    """`value` with every `inlineData`/`inline_data` blob left out, and those blobs' tokens."""
    if isinstance(value, dict):
        blob = value.get("inlineData", value.get("inline_data"))
        tokens = 0
        if isinstance(blob, dict) and isinstance(blob.get("data"), str):
            mime = blob.get("mimeType", blob.get("mime_type"))
            tokens = inline_tokens(mime if isinstance(mime, str) else None, blob["data"])
            value = {k: v for k, v in value.items() if k not in ("inlineData", "inline_data")}
        kept: dict[str, Any] = {}
        for key, item in value.items():
            kept[key], more = _without_inline_data(item)
            tokens += more
        return kept, tokens
    if isinstance(value, list):
        items = [_without_inline_data(v) for v in value]
        return [v for v, _ in items], sum(t for _, t in items)
    return value, 0


def content_tokens(event: MessageEvent) -> int:
    """A rough token count of one content: the sum of its parts' (at least 1)."""
    return max(1, sum(part_tokens(part) for part in event.parts))


_MEMO: dict[int, tuple[weakref.ref[ContextView], tuple[int, int, int], int]] = {}
MEMO_SIZE = 16
"""How many views' estimates are remembered (one per conversation kept live, and a few)."""


def estimate_tokens(view: ContextView) -> int:
    """Last reported prompt size plus an estimate of what came after it (`part_tokens`:
    ~4 characters a token; media by kind).

    Usage reported before the latest compaction is stale (it measured the old context):
    then the compaction's `tokens_after` is the base, or everything is estimated.
    Remembered per view until it changes (every change folds a newer seq), so showing a
    conversation again does not count a long history without usage (an import) again.
    """
    key = (view.last_seq, view.boundary_seq, len(view.messages))
    memo = _MEMO.get(id(view))
    if memo is not None and memo[0]() is view and memo[1] == key:
        return memo[2]
    tokens = _estimate(view)
    if len(_MEMO) >= MEMO_SIZE:
        _MEMO.pop(next(iter(_MEMO)))
    _MEMO[id(view)] = (weakref.ref(view), key, tokens)
    return tokens


def _estimate(view: ContextView) -> int:
    summary = view.summary
    base: int | None = None
    tail_tokens = 0
    for stored in reversed(view.messages):
        event = stored.event
        if not isinstance(event, MessageEvent):
            continue
        fresh = stored.seq > view.boundary_seq
        if fresh and event.usage and event.usage.prompt_tokens is not None:
            base = event.usage.prompt_tokens + (event.usage.output_tokens or 0)
            break
        if not fresh and summary is not None and summary.tokens_after is not None:
            base = summary.tokens_after
            break
        tail_tokens += sum(part_tokens(p) for p in event.parts)
    if base is None:
        base = 0
        if summary is not None and summary.tokens_after is not None:
            base = summary.tokens_after
        elif summary is not None:
            tail_tokens += len(summary.summary) // CHARS_PER_TOKEN
    return base + tail_tokens

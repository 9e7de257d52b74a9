"""An MCP tool result -> the function response Koroku logs and sends, plus media parts.

Text blocks are joined; `isError` becomes an `error` key (the one failure rule sees it);
images, audio and documents Gemini reads become inline-data parts sent with the response;
embedded blobs of a text or JSON type are decoded to text; other binary types are named by
URI, type and size; links are listed by URI. Long text is cut (`MAX_TEXT`), and said so.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from koroku_desktop.domain.media import GEMINI_INLINE, is_text_type
from koroku_desktop.domain.parts import InlineDataPart

__all__ = ["GEMINI_INLINE", "blob_entry", "clip", "is_text_type", "to_response"]

MAX_TEXT = 200_000
"""Characters of text one result may put before the model; the rest is cut, and said so."""


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """`text`, or its first `limit` characters with a note saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... cut: the result had {len(text):,} characters, {limit:,} kept]"


def _valid_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def blob_entry(
    uri: str, mime_type: str | None, blob: str, add_media: Callable[[str, str, str], None]
) -> dict[str, Any]:
    """A base64 blob: text types decoded to text, Gemini's media inline, others named."""
    mime = (mime_type or "application/octet-stream").split(";", 1)[0].strip().lower()
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return {"uri": uri, "mime_type": mime, "error": "content that was not valid base64"}
    if is_text_type(mime):
        return {"uri": uri, "mime_type": mime, "text": clip(raw.decode("utf-8", "replace"))}
    if mime in GEMINI_INLINE:
        add_media(mime, blob, uri)
        return {"uri": uri, "mime_type": mime, "attached": True}
    return {
        "uri": uri,
        "mime_type": mime,
        "size": len(raw),
        "note": "binary content of a type the model cannot read; not sent",
    }


def to_response(result: CallToolResult) -> tuple[dict[str, Any], list[InlineDataPart]]:
    """The response dict and the media parts of one `tools/call` result."""
    texts: list[str] = []
    media: list[InlineDataPart] = []
    resources: list[dict[str, Any]] = []

    def add_media(mime: str, data: str, uri: str | None = None) -> None:
        if uri is not None:  # a blob: blob_entry checked it and names it
            media.append(InlineDataPart(mime_type=mime, data=data))
        elif _valid_base64(data):
            media.append(InlineDataPart(mime_type=mime, data=data))
            resources.append({"attached": mime})
        else:
            texts.append(f"[{mime} content that was not valid base64 was dropped]")

    for block in result.content:
        if isinstance(block, TextContent):
            texts.append(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            add_media(block.mime_type, block.data)
        elif isinstance(block, EmbeddedResource):
            res = block.resource
            if isinstance(res, TextResourceContents):
                entry = {"uri": str(res.uri), "mime_type": res.mime_type, "text": clip(res.text)}
                resources.append(entry)
            elif isinstance(res, BlobResourceContents):
                resources.append(blob_entry(str(res.uri), res.mime_type, res.blob, add_media))
        elif isinstance(block, ResourceLink):
            resources.append({"uri": str(block.uri), "name": block.name, "link": True})
    text = clip("\n".join(texts))
    response: dict[str, Any] = {}
    if result.is_error:
        response["error"] = text or "the MCP tool reported an error"
    else:
        response["result"] = text
        structured = result.structured_content
        if structured is not None:
            size = len(json.dumps(structured, default=str))
            if size <= MAX_TEXT:
                response["structured"] = structured
            else:
                response["structured_cut"] = f"structured content of {size:,} characters left out"
    if resources:
        response["resources"] = resources
    return response, media

"""An MCP tool result -> the function response Koroku logs and sends, plus media parts.

Text blocks are joined; `isError` becomes an `error` key (the one failure rule sees it);
images, audio and binary documents Gemini reads become inline-data parts sent with the
response; other embedded resources and links are listed by URI.
"""

from __future__ import annotations

import base64
import binascii
import json
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

from koroku_desktop.domain.parts import InlineDataPart

_MEDIA_PREFIXES = ("image/", "audio/", "application/pdf")

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


def to_response(result: CallToolResult) -> tuple[dict[str, Any], list[InlineDataPart]]:
    """The response dict and the media parts of one `tools/call` result."""
    texts: list[str] = []
    media: list[InlineDataPart] = []
    resources: list[dict[str, Any]] = []

    def add_media(mime: str, data: str, uri: str | None = None) -> None:
        if _valid_base64(data):
            media.append(InlineDataPart(mime_type=mime, data=data))
            resources.append({"attached": mime, **({"uri": uri} if uri else {})})
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
                entry = {"uri": str(res.uri), "mime_type": res.mime_type, "text": res.text}
                resources.append(entry)
            elif isinstance(res, BlobResourceContents):
                mime = res.mime_type or "application/octet-stream"
                if mime.startswith(_MEDIA_PREFIXES):
                    add_media(mime, res.blob, str(res.uri))
                else:
                    resources.append({"uri": str(res.uri), "mime_type": mime, "binary": True})
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

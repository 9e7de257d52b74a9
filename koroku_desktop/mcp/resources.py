"""A server's resources: listing them (and their templates), reading one for the model.

Listing runs when the server connects and again when it says its list changed; reading
turns the contents into what a tool response holds (text, media parts, named binaries),
with the same rules as a tool result's embedded resources, or (`to_attachments`) into
attachments the composer keeps in the blob store like files.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from mcp import Client
from mcp_types import (
    BlobResourceContents,
    ReadResourceResult,
    TextResourceContents,
)

from koroku_desktop.domain.attachment import AttachmentRefused, PendingAttachment, check_size
from koroku_desktop.domain.media import base_type
from koroku_desktop.domain.parts import InlineDataPart
from koroku_desktop.mcp.listing import every_page
from koroku_desktop.mcp.results import blob_entry, clip
from koroku_desktop.mcp.state import McpResourceInfo

MAX_LISTED = 2000
"""Resources kept per server (a server listing more is cut there)."""


async def list_resources(client: Client, server: str) -> tuple[McpResourceInfo, ...]:
    """Every resource and template the server lists (none when it has no resources)."""
    if client.server_capabilities.resources is None:
        return ()

    found = await every_page(
        lambda cursor: client.list_resources(cursor=cursor, cache_mode="refresh"),
        lambda page: (
            McpResourceInfo(server, str(r.uri), r.title or r.name, r.description or "", r.mime_type)
            for r in page.resources
        ),
        most=MAX_LISTED,
    )
    found += await every_page(
        lambda cursor: client.list_resource_templates(cursor=cursor, cache_mode="refresh"),
        lambda page: (
            McpResourceInfo(
                server, t.uri_template, t.title or t.name, t.description or "", t.mime_type, True
            )
            for t in page.resource_templates
        ),
        most=MAX_LISTED - len(found),
    )
    return tuple(found[:MAX_LISTED])


def read_response(result: ReadResourceResult) -> tuple[dict[str, Any], list[InlineDataPart]]:
    """A `resources/read` result as a function response and the media parts it carries."""
    media: list[InlineDataPart] = []

    def add_media(mime: str, data: str, _uri: str) -> None:
        media.append(InlineDataPart(mime_type=mime, data=data))

    contents: list[dict[str, Any]] = []
    for item in result.contents:
        if isinstance(item, TextResourceContents):
            contents.append({"uri": str(item.uri), "mime_type": item.mime_type,
                             "text": clip(item.text)})  # fmt: skip
        elif isinstance(item, BlobResourceContents):
            contents.append(blob_entry(str(item.uri), item.mime_type, item.blob, add_media))
    return {"contents": contents}, media


def to_attachments(result: ReadResourceResult, server: str, name: str) -> list[PendingAttachment]:
    """Each content of a `resources/read` result as an attachment (its bytes as the server
    sent them); raises AttachmentRefused for empty, oversized or undecodable content."""
    found: list[PendingAttachment] = []
    for item in result.contents:
        uri = str(item.uri)
        label = name if len(result.contents) == 1 else f"{name} — {uri.rsplit('/', 1)[-1]}"
        if isinstance(item, TextResourceContents):
            data, mime = item.text.encode("utf-8"), base_type(item.mime_type or "text/plain")
        elif isinstance(item, BlobResourceContents):
            try:
                data = base64.b64decode(item.blob, validate=True)
            except (binascii.Error, ValueError):
                raise AttachmentRefused(f"{label}: the server sent invalid base64.") from None
            mime = base_type(item.mime_type)
        else:
            continue
        check_size(data, label)
        found.append(PendingAttachment(data, label, mime, server=server, uri=uri))
    if not found:
        raise AttachmentRefused(f"{name}: the server returned no content.")
    return found

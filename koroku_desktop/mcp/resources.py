"""A server's resources: listing them (and their templates), reading one for the model.

Listing runs when the server connects and again when it says its list changed; reading
turns the contents into what a tool response holds (text, media parts, named binaries),
with the same rules as a tool result's embedded resources.
"""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp_types import BlobResourceContents, ReadResourceResult, TextResourceContents

from koroku_desktop.domain.parts import InlineDataPart
from koroku_desktop.mcp.results import blob_entry, clip
from koroku_desktop.mcp.state import McpResourceInfo

LIST_PAGES = 20
MAX_LISTED = 2000
"""Resources kept per server (a server listing more is cut there)."""


async def list_resources(client: Client, server: str) -> tuple[McpResourceInfo, ...]:
    """Every resource and template the server lists (none when it has no resources)."""
    if client.server_capabilities.resources is None:
        return ()
    found: list[McpResourceInfo] = []
    cursor: str | None = None
    for _ in range(LIST_PAGES):
        page = await client.list_resources(cursor=cursor, cache_mode="refresh")
        found.extend(
            McpResourceInfo(server, str(r.uri), r.title or r.name, r.description or "", r.mime_type)
            for r in page.resources
        )
        cursor = page.next_cursor
        if cursor is None or len(found) >= MAX_LISTED:
            break
    cursor = None
    for _ in range(LIST_PAGES):
        tpl = await client.list_resource_templates(cursor=cursor, cache_mode="refresh")
        found.extend(
            McpResourceInfo(
                server, t.uri_template, t.title or t.name, t.description or "", t.mime_type, True
            )
            for t in tpl.resource_templates
        )
        cursor = tpl.next_cursor
        if cursor is None or len(found) >= MAX_LISTED:
            break
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

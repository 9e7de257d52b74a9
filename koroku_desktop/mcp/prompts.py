"""A server's prompts: listing them, completing an argument, getting one as message text.

A prompt becomes the text of the user's next message (its user-role text parts joined;
embedded text resources included, other content named), so a slash command in `koroku
chat` sends what the server's prompt says.
"""

from __future__ import annotations

from mcp import Client
from mcp_types import (
    EmbeddedResource,
    GetPromptResult,
    PromptReference,
    TextContent,
    TextResourceContents,
)

from koroku_desktop.mcp.results import clip
from koroku_desktop.mcp.state import McpPromptInfo

LIST_PAGES = 20


async def list_prompts(client: Client, server: str) -> tuple[McpPromptInfo, ...]:
    """Every prompt the server lists (none when it has no prompts)."""
    if client.server_capabilities.prompts is None:
        return ()
    found: list[McpPromptInfo] = []
    cursor: str | None = None
    for _ in range(LIST_PAGES):
        page = await client.list_prompts(cursor=cursor, cache_mode="refresh")
        for p in page.prompts:
            args = tuple((a.name, bool(a.required), a.description or "") for a in p.arguments or ())
            found.append(McpPromptInfo(server, p.name, p.description or p.title or "", args))
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(found)


async def complete(
    client: Client, prompt: str, argument: str, value: str, known: dict[str, str]
) -> list[str]:
    """The server's completions of one prompt argument (empty when it offers none)."""
    if client.server_capabilities.completions is None:
        return []
    result = await client.complete(
        PromptReference(name=prompt), {"name": argument, "value": value}, known or None
    )
    return list(result.completion.values)


def prompt_text(result: GetPromptResult) -> str:
    """The prompt's messages as the text of one user message."""
    pieces: list[str] = []
    for message in result.messages:
        content = message.content
        if isinstance(content, TextContent):
            text = content.text
        elif isinstance(content, EmbeddedResource) and isinstance(
            content.resource, TextResourceContents
        ):
            text = f"[{content.resource.uri}]\n{content.resource.text}"
        elif isinstance(content, EmbeddedResource):
            text = f"[resource {content.resource.uri}]"
        else:
            text = f"[{content.type} content]"
        pieces.append(text if message.role == "user" else f"(assistant) {text}")
    return clip("\n\n".join(pieces))

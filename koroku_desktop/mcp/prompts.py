"""A server's prompts: listing them and getting one as message text (completing an argument:
mcp/listing.py).

A prompt becomes the text of the user's next message (its user-role text parts joined;
embedded text resources included, other content named), so a slash command in `koroku
chat` sends what the server's prompt says.
"""

from __future__ import annotations

from mcp import Client
from mcp_types import (
    EmbeddedResource,
    GetPromptResult,
    Prompt,
    TextContent,
    TextResourceContents,
)

from koroku_desktop.mcp.listing import every_page
from koroku_desktop.mcp.results import clip
from koroku_desktop.mcp.state import McpPromptInfo


async def list_prompts(client: Client, server: str) -> tuple[McpPromptInfo, ...]:
    """Every prompt the server lists (none when it has no prompts)."""
    if client.server_capabilities.prompts is None:
        return ()

    found = await every_page(
        lambda cursor: client.list_prompts(cursor=cursor, cache_mode="refresh"),
        lambda page: (_prompt_info(server, p) for p in page.prompts),
    )
    return tuple(found)


def _prompt_info(server: str, prompt: Prompt) -> McpPromptInfo:
    args = tuple((a.name, bool(a.required), a.description or "") for a in prompt.arguments or ())
    return McpPromptInfo(server, prompt.name, prompt.description or prompt.title or "", args)


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

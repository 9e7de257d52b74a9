"""An MCP server (stdio, the SDK's own, 2026-07-28) whose resources change: `note://today`
changes when `edit` runs (a resource-updated event), and `add` lists a new note (a
resources list-changed event) — both reach clients through `subscriptions/listen`."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resources import FunctionResource

server = MCPServer("notes-server")
NOTES = {"today": "Buy tea."}


def _note(name: str) -> FunctionResource:
    return FunctionResource(
        uri=f"note://{name}",
        name=name,
        mime_type="text/plain",
        fn=lambda: NOTES[name],
    )


server.add_resource(_note("today"))


@server.tool(description="Change today's note.")
async def edit(text: str, ctx: Context) -> str:
    NOTES["today"] = text
    await ctx.notify_resource_updated("note://today")
    return "edited"


@server.tool(description="Add a note.")
async def add(name: str, text: str, ctx: Context) -> str:
    NOTES[name] = text
    server.add_resource(_note(name))
    await ctx.notify_resources_changed()
    return "added"


if __name__ == "__main__":
    server.run("stdio")

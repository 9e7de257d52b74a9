"""`tools/list` of one server, every page, as Koroku's `McpToolInfo` (no SDK types out)."""

from __future__ import annotations

from mcp import Client
from mcp_types import Tool

from koroku_desktop.mcp.listing import every_page
from koroku_desktop.mcp.state import McpToolInfo


def _tool_info(server: str, tool: Tool) -> McpToolInfo:
    hints = tool.annotations
    return McpToolInfo(
        server=server,
        name=tool.name,
        description=tool.description or tool.title or tool.name,
        input_schema=dict(tool.input_schema or {}),
        read_only=bool(hints is not None and hints.read_only_hint),
        destructive=bool(hints is not None and hints.destructive_hint),
        open_world=bool(hints is not None and hints.open_world_hint),
        task_support=(tool.execution.task_support if tool.execution else None) or "forbidden",
    )


async def list_tools(client: Client, server: str, refresh: bool) -> tuple[McpToolInfo, ...]:
    """Every tool the server lists (`refresh`: bypass the SDK's cache)."""
    found = await every_page(
        lambda cursor: client.list_tools(cursor=cursor, cache_mode="refresh" if refresh else "use"),
        lambda page: (_tool_info(server, t) for t in page.tools),
    )
    return tuple(found)

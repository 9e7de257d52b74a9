"""An MCP server (stdio) for the result and annotation tests: hints, blobs, logs, a liar.

`wipe` is marked destructive, `lookup` open-world; `blobs` returns embedded blobs of a JSON,
a CSV, a zip and a PNG type; `liar` declares an output schema its structured content breaks;
`chatter` sends log notifications before it answers.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    TextContent,
    ToolAnnotations,
)

server = MCPServer("rich-server")

PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5"
    "ErkJggg=="
)


@server.tool(description="Delete everything.", annotations=ToolAnnotations(destructive_hint=True))
def wipe() -> str:
    return "wiped"


@server.tool(description="Look it up online.", annotations=ToolAnnotations(open_world_hint=True))
def lookup(what: str) -> str:
    return f"found {what}"


def _blob(uri: str, mime: str, raw: bytes) -> EmbeddedResource:
    data = base64.b64encode(raw).decode("ascii")
    return EmbeddedResource(
        type="resource", resource=BlobResourceContents(uri=uri, mime_type=mime, blob=data)
    )


@server.tool(description="Blobs of several types.")
def blobs() -> CallToolResult:
    return CallToolResult(
        content=[
            _blob("data://config.json", "application/json", json.dumps({"a": 1}).encode()),
            _blob("data://table.csv", "text/csv; charset=utf-8", "name,n\nå,1\n".encode()),
            _blob("data://bundle.zip", "application/zip", b"PK\x03\x04" + b"\0" * 60),
            _blob("data://dot.png", "image/png", base64.b64decode(PNG_1X1)),
        ]
    )


@server.tool(description="Promises a count, sends a word.")
def liar() -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="oops")],
                          structured_content={"count": "many"})  # fmt: skip


@server.tool(description="Logs, then answers.")
async def chatter(ctx: Context) -> str:
    await ctx.info("chatter is thinking")  # a notifications/message the client should log
    return "said it"


def _declare_liar_schema() -> None:
    tool: Any = server._tool_manager._tools["liar"]
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    tool.fn_metadata.output_schema = schema


if __name__ == "__main__":
    _declare_liar_schema()
    server.run()

"""A small MCP server (stdio or streamable HTTP) whose tools record every call to a file.

Usage: `python tool_server.py stdio` or `python tool_server.py http PORT`. Every call is
appended as one JSON line to `$MCP_CALLS_FILE` (when set), so a test can prove that a denied
call never reached the server.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import EmbeddedResource, TextResourceContents, ToolAnnotations

# A 1x1 PNG: what the `snapshot` tool returns.
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

server = MCPServer(os.environ.get("MCP_SERVER_NAME", "tool-server"))


def _record(tool: str, args: dict[str, Any]) -> None:
    path = os.environ.get("MCP_CALLS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"tool": tool, "args": args, "pid": os.getpid()}) + "\n")


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    _record("echo", {"text": text})
    return f"echo: {text}"


@server.tool(
    description="Read the server's notes (changes nothing).",
    annotations=ToolAnnotations(read_only_hint=True),
)
def peek() -> str:
    _record("peek", {})
    return "the notes say hello"


@server.tool(description="A picture.")
def snapshot() -> Image:
    _record("snapshot", {})
    return Image(data=PNG_1X1, format="png")


@server.tool(description="A document as an embedded resource.")
def document() -> EmbeddedResource:
    _record("document", {})
    contents = TextResourceContents(uri="memo://one", mime_type="text/plain", text="memo text")
    return EmbeddedResource(type="resource", resource=contents)


@server.tool(description="Always fails.")
def explode() -> str:
    _record("explode", {})
    raise ValueError("the server refused")


@server.tool(description="Sleep, then answer.")
async def slow(seconds: float) -> str:
    _record("slow", {"seconds": seconds})
    await anyio.sleep(seconds)
    return "finally"


@server.tool(description="Exit the server process at once.")
def crash() -> str:
    _record("crash", {})
    os._exit(3)


@server.tool(name="weird name/with:chars!", description="A tool whose name needs sanitising.")
def weird(count: int = 1, tags: list[str] | None = None) -> str:
    _record("weird name/with:chars!", {"count": count, "tags": tags})
    return f"weird {count} {tags}"


@server.tool(description="A very long text.")
def huge(size: int) -> str:
    _record("huge", {"size": size})
    return "x" * size


@server.tool(description="The HTTP headers of this call (streamable HTTP only).")
def headers(ctx: Context) -> dict[str, str]:
    request = ctx.request_context.request
    seen = dict(request.headers) if request is not None else {}
    _record("headers", {})
    return {k: v for k, v in seen.items() if k.lower().startswith("x-")}


if __name__ == "__main__":
    if os.environ.get("MCP_PID_FILE"):
        with open(os.environ["MCP_PID_FILE"], "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
    if os.environ.get("MCP_START_DELAY"):
        time.sleep(float(os.environ["MCP_START_DELAY"]))
    if os.environ.get("MCP_EXIT_AFTER"):  # a server that dies on its own after a while
        import threading

        threading.Timer(float(os.environ["MCP_EXIT_AFTER"]), os._exit, (7,)).start()
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()

"""`read_mcp_resource`: lets the model read a resource a result linked to (read-only).

Offered while at least one ready server lists resources; the model names the server and
the URI (a `resource_link` in a tool result gives both). No SDK import here: the spec is
built on every step.
"""

from __future__ import annotations

from collections.abc import Collection

from koroku_desktop.domain.model_io import ToolSpec

NAME = "read_mcp_resource"


def spec(servers: Collection[str]) -> ToolSpec:
    """The declaration, naming the servers whose resources can be read."""
    names = ", ".join(repr(s) for s in sorted(servers))
    return ToolSpec(
        name=NAME,
        description=(
            "Read a resource of an MCP server (read-only), e.g. one a tool result linked to "
            f"with a URI. Servers with resources: {names}."
        ),
        parameters={
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The MCP server's name"},
                "uri": {"type": "string", "description": "The resource's URI"},
            },
            "required": ["server", "uri"],
        },
    )

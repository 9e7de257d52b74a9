"""What a manager offers beyond tools: reading resources, and prompts with completions.

A mixin of `McpManager` (kept apart to keep each module small); every failure is a clear
message, never an SDK exception reaching a front end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from koroku_desktop.domain.parts import InlineDataPart
from koroku_desktop.mcp.state import McpPromptInfo

if TYPE_CHECKING:
    from koroku_desktop.mcp.connection import ServerConnection


class McpPromptError(ValueError):
    """A prompt that cannot be got: unknown, a missing argument, or the server's refusal."""


class McpExtras:
    """Resources and prompts of the connected servers (mixed into `McpManager`)."""

    _connections: dict[str, ServerConnection]

    def _readable_servers(self) -> list[str]:
        raise NotImplementedError

    def _call_limit(self) -> float:
        raise NotImplementedError

    async def read_resource(
        self, server: str, uri: str
    ) -> tuple[dict[str, Any], list[InlineDataPart]]:
        """Read one resource of `server`; every failure is an `{"error": ...}` response."""
        conn = self._connections.get(server)
        if conn is None or not uri:
            known = ", ".join(repr(s) for s in self._readable_servers()) or "none"
            return {"error": f"no MCP server {server!r} with resources (servers: {known})"}, []
        from koroku_desktop.mcp.connection import McpUnavailable, describe_error
        from koroku_desktop.mcp.resources import read_response

        try:
            result = await conn.read_resource(uri, self._call_limit())
        except McpUnavailable as exc:
            return {"error": str(exc)}, []
        except TimeoutError:
            return {"error": f"MCP server {server!r} did not answer in time"}, []
        except Exception as exc:
            return {"error": f"MCP server {server!r}: {describe_error(exc)}"}, []
        return read_response(result)

    def prompts(self) -> list[McpPromptInfo]:
        """Every ready server's prompts, by server then name."""
        return [p for c in self._connections.values() if c.state == "ready" for p in c.prompts]

    def find_prompt(self, command: str) -> McpPromptInfo | None:
        """The prompt of `server:name` (or a bare name only one server has)."""
        server, _, name = command.rpartition(":")
        found = [p for p in self.prompts() if p.name == name and server in ("", p.server)]
        return found[0] if len(found) == 1 else None

    async def get_prompt(self, prompt: McpPromptInfo, args: dict[str, str]) -> str:
        """The prompt's text with `args`; raises McpPromptError saying what is wrong."""
        missing = [n for n, required, _ in prompt.arguments if required and not args.get(n)]
        if missing:
            raise McpPromptError(f"the prompt {prompt.name!r} needs {', '.join(missing)}")
        from koroku_desktop.mcp.connection import describe_error
        from koroku_desktop.mcp.prompts import prompt_text

        conn = self._connections.get(prompt.server)
        try:
            if conn is None:
                raise McpPromptError(f"MCP server {prompt.server!r} is not running")
            result = await conn.client().get_prompt(prompt.name, args)
        except McpPromptError:
            raise
        except Exception as exc:
            raise McpPromptError(f"MCP server {prompt.server!r}: {describe_error(exc)}") from exc
        return prompt_text(result)

    async def complete_prompt(
        self, prompt: McpPromptInfo, argument: str, value: str, known: dict[str, str]
    ) -> list[str]:
        """The server's completions for one argument (empty when none or on failure)."""
        from koroku_desktop.mcp.prompts import complete

        conn = self._connections.get(prompt.server)
        if conn is None:
            return []
        try:
            return await complete(conn.client(), prompt.name, argument, value, known)
        except Exception:
            return []

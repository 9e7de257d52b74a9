"""What a manager offers beyond tools: resources (read for the model or attached), prompts,
and completions of their arguments.

A mixin of `McpManager` (kept apart to keep each module small); every failure is a clear
message, never an SDK exception reaching a front end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from koroku_desktop.domain.attachment import AttachmentRefused, PendingAttachment
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.parts import InlineDataPart
from koroku_desktop.mcp.state import McpPromptInfo, McpResourceInfo

if TYPE_CHECKING:
    from koroku_desktop.mcp.connection import ServerConnection


log = logging.getLogger(__name__)


class McpPromptError(RefusedError, ValueError):
    """A prompt that cannot be got: unknown, a missing argument, or the server's refusal."""


class McpExtras:
    """Resources and prompts of the connected servers (mixed into `McpManager`)."""

    _connections: dict[str, ServerConnection]
    on_resource_updated: list[Callable[[str, str], None]]

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
        except Exception as exc:  # noqa: BLE001 — any server failure reaches the model as an error
            return {"error": f"MCP server {server!r}: {describe_error(exc)}"}, []
        return read_response(result)

    def resources(self) -> list[McpResourceInfo]:
        """Every ready server's resources and templates, as last listed (the picker's list)."""
        return [r for c in self._connections.values() if c.state == "ready" for r in c.resources]

    async def read_attachments(self, server: str, uri: str, name: str) -> list[PendingAttachment]:
        """Read a resource to attach it (one attachment per content); raises
        AttachmentRefused saying why when it cannot be read or attached."""
        from koroku_desktop.mcp.connection import describe_error
        from koroku_desktop.mcp.resources import to_attachments

        conn = self._connections.get(server)
        try:
            if conn is None:
                raise AttachmentRefused(f"MCP server {server!r} is not running")  # noqa: TRY301 — one message path for every failure
            result = await conn.read_resource(uri, self._call_limit())
        except AttachmentRefused:
            raise
        except TimeoutError:
            raise AttachmentRefused(f"MCP server {server!r} did not answer in time") from None
        except Exception as exc:
            raise AttachmentRefused(f"MCP server {server!r}: {describe_error(exc)}") from exc
        return to_attachments(result, server, name)

    async def complete_template(
        self, template: McpResourceInfo, argument: str, value: str, known: dict[str, str]
    ) -> list[str]:
        """The server's completions for one variable of a URI template (empty on failure)."""
        return await self._complete(
            template.server, "template", template.uri, argument, value, known
        )

    async def subscribe(self, server: str, uri: str) -> bool:
        """Ask `server` to report changes of `uri` (an attached resource); False when it does
        not take subscriptions or refuses (the attachment stands either way)."""
        conn = self._connections.get(server)
        if conn is None:
            return False
        try:
            return await conn.subscriptions.add(conn.client(), uri)
        except Exception:  # noqa: BLE001 — a refused subscription only means no updates
            return False

    def _resource_updated(self, server: str, uri: str) -> None:
        for callback in list(self.on_resource_updated):
            try:
                callback(server, uri)
            except Exception:  # one failing listener must not stop the others
                log.exception("MCP resource-updated callback failed")

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
                raise McpPromptError(f"MCP server {prompt.server!r} is not running")  # noqa: TRY301 — one message path for every failure
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
        return await self._complete(prompt.server, "prompt", prompt.name, argument, value, known)

    async def _complete(
        self,
        server: str,
        of: Literal["prompt", "template"],
        name: str,
        argument: str,
        value: str,
        known: dict[str, str],
    ) -> list[str]:
        conn = self._connections.get(server)
        if conn is None:
            return []
        from mcp_types import PromptReference, ResourceTemplateReference

        from koroku_desktop.mcp.listing import complete

        ref = PromptReference(name=name) if of == "prompt" else ResourceTemplateReference(uri=name)
        try:
            return await complete(conn.client(), ref, argument, value, known)
        except Exception:  # noqa: BLE001 — completions are suggestions; none is a fine answer
            return []

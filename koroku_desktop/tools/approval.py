"""ApprovalPolicy: which tool calls run at once and which wait for the user's word."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal, Protocol

from koroku_desktop.tools.base import AgentTool

GrantScope = Literal["once", "session", "always"]


class ToolLookup(Protocol):
    """What the policy needs of a registry."""

    def get(self, name: str) -> type[AgentTool] | None:
        """The tool class called `name`, or None."""
        ...

    def is_builtin(self, name: str) -> bool:
        """Whether `name` is a built-in tool."""
        ...

    def is_read_only(self, name: str) -> bool:
        """Whether the tool's source marked it read-only (an MCP `readOnlyHint`)."""
        ...

    def is_destructive(self, name: str) -> bool:
        """Whether the tool's source marked it destructive (an MCP `destructiveHint`)."""
        ...


class ApprovalPolicy:
    """Decides whether to ask before a call, and remembers session and permanent grants.

    Built-ins with `needs_approval = False` (read_file, recall) never ask. Everything else
    asks unless granted for this session or always. User tools always ask by default, even
    if they set `needs_approval = False`: a tool file written by the model must not be able
    to approve itself. Unknown tools ask too, so that a tool appearing between the check and
    the call can never skip the question. MCP tools ask like `bash`; "always" is per server
    tool (its function name); read-only ones skip the question only with `trust_read_only`;
    ones their server marks destructive ask every time, whatever was granted.
    """

    def __init__(
        self,
        always: Iterable[str] = (),
        on_always_granted: Callable[[str], None] | None = None,
    ) -> None:
        self._always: set[str] = set(always)
        self._session: set[str] = set()
        self.on_always_granted = on_always_granted
        """Called with the tool name on every `always` grant, so the settings can persist it."""
        self.trust_read_only = False
        """Let tools their MCP server marks read-only run without asking (off by default)."""

    def needs_asking(
        self,
        tool_name: str,
        registry: ToolLookup,
        args: dict[str, Any] | None = None,
        workspace: Path | None = None,
    ) -> bool:
        """Whether a call to `tool_name` (with `args`, run in `workspace`) must wait for the user.

        A built-in may ask for a particular call (`AgentTool.approval_for`): `read_file`
        outside the workspace asks unless granted, and on a secret path always asks.
        """
        cls = registry.get(tool_name)
        builtin = cls is not None and registry.is_builtin(tool_name)
        if cls is not None and builtin and args is not None and workspace is not None:
            verdict = cls.approval_for(args, workspace)
            if verdict == "always_ask":
                return True
            if verdict == "no_change":
                return False
            if verdict == "ask":
                return not self.is_granted(tool_name)
        if cls is not None and builtin and not cls.needs_approval:
            return False
        if cls is None and registry.is_destructive(tool_name):
            return True
        if self.trust_read_only and cls is None and registry.is_read_only(tool_name):
            return False
        return not self.is_granted(tool_name)

    def is_granted(self, tool_name: str) -> bool:
        """Whether the user granted `tool_name` for this session or always."""
        return tool_name in self._session or tool_name in self._always

    def grant(self, tool_name: str, scope: GrantScope) -> None:
        """Record the user's yes: `once` remembers nothing, `session` until exit, `always` forever.

        An `always` grant calls `on_always_granted` so that the settings can persist it.
        """
        if scope == "session":
            self._session.add(tool_name)
        elif scope == "always":
            self._always.add(tool_name)
            if self.on_always_granted is not None:
                self.on_always_granted(tool_name)

    def revoke(self, tool_name: str) -> None:
        """Forget every grant of `tool_name` (the settings drop a persisted one themselves)."""
        self._session.discard(tool_name)
        self._always.discard(tool_name)

    def set_always(self, tools: Iterable[str]) -> None:
        """Replace the permanent grants (e.g. after the settings were edited)."""
        self._always = set(tools)

    def always_granted(self) -> set[str]:
        """Tools granted forever (a copy)."""
        return set(self._always)

    def session_granted(self) -> set[str]:
        """Tools granted for this session (a copy)."""
        return set(self._session)

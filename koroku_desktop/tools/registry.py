"""ToolRegistry: the built-in tools plus the user's own, and how a call is run safely."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from koroku_desktop.domain.json_value import JsonObject, JsonValue
from koroku_desktop.domain.model_io import ToolSpec
from koroku_desktop.domain.parts import InlineDataPart
from koroku_desktop.tools.base import AgentTool, ToolContext, tool_error
from koroku_desktop.tools.builtin_bash import Bash
from koroku_desktop.tools.builtin_files import EditFile, ReadFile, WriteFile
from koroku_desktop.tools.recall import Recall
from koroku_desktop.tools.remember import Remember
from koroku_desktop.tools.schedule import ScheduleTool
from koroku_desktop.tools.user_tools import UserToolLoader

log = logging.getLogger(__name__)

BUILTIN_TOOLS: tuple[type[AgentTool], ...] = (
    ReadFile,
    WriteFile,
    EditFile,
    Bash,
    Recall,
    Remember,
    ScheduleTool,
)

MEDIA_KEY = "__media__"
"""Key under which `run` hands media parts (an MCP tool's images) to the loop; never logged."""


class ToolSource(Protocol):
    """Tools that are not classes: an MCP server's, found at run time (see koroku_desktop.mcp).

    Their calls always go through the approval policy (unless granted, or read-only and
    trusted), and every failure comes back as an `{"error": ...}` response.
    """

    def specs(self, reserved: Collection[str] = ()) -> list[ToolSpec]:
        """Declarations of the tools available now, named so as not to clash with `reserved`."""
        ...

    def owns(self, name: str) -> bool:
        """Whether `name` is one of this source's tools (as last declared)."""
        ...

    def is_read_only(self, name: str) -> bool:
        """Whether the tool promises to change nothing."""
        ...

    def is_destructive(self, name: str) -> bool:
        """Whether the tool says it may delete or overwrite things (asked every time)."""
        ...

    def describe(self, name: str) -> str | None:
        """Where the tool comes from, for the approval prompt (e.g. the server and tool)."""
        ...

    async def call(self, name: str, args: JsonObject) -> tuple[JsonObject, list[InlineDataPart]]:
        """Run the tool: its JSON response and media parts (images) the model should see."""
        ...


def split_media(response: JsonObject) -> list[InlineDataPart] | None:
    """Take the media parts `run` put under MEDIA_KEY out of `response` (None when none)."""
    media = response.pop(MEDIA_KEY, None)
    if not isinstance(media, list) or not media:
        return None
    return [InlineDataPart.model_validate(m) for m in media]


def describe_validation_error(exc: ValidationError) -> str:
    """Pydantic's errors as one readable line: `field: problem; other: problem`."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _json_ready(value: JsonObject) -> JsonObject:
    """The result as plain JSON values (paths and other objects become strings)."""
    ready: JsonObject = json.loads(json.dumps(value, default=str))
    return ready


class ToolRegistry:
    """Every tool the model may call: built-ins first, then tools from `user_tools_dir`."""

    def __init__(
        self,
        user_tools_dir: Path | None,
        builtins: Sequence[type[AgentTool]] = BUILTIN_TOOLS,
    ) -> None:
        self._builtins: dict[str, type[AgentTool]] = {cls.name: cls for cls in builtins}
        self._user = UserToolLoader(user_tools_dir, reserved=self._builtins)
        self._sources: list[ToolSource] = []
        self.switched_off: set[str] = {"schedule"}
        """Built-in tools not offered now (e.g. `remember` while facts are turned off;
        `schedule` is on only where a front end runs what it schedules)."""

    def add_source(self, source: ToolSource) -> None:
        """Offer the tools of `source` (after the built-ins and user tools)."""
        self._sources.append(source)

    def _source_of(self, name: str) -> ToolSource | None:
        if name in self._builtins:
            return None
        return next((s for s in self._sources if s.owns(name)), None)

    @property
    def user_tools_dir(self) -> Path | None:
        """The folder user tools are loaded from, if any."""
        return self._user.directory

    @property
    def errors(self) -> dict[str, str]:
        """User-tool file path -> why it (or a tool in it) was skipped."""
        self._user.refresh()
        return self._user.errors

    def refresh(self) -> bool:
        """Pick up new, changed and removed user-tool files now; return whether any changed."""
        return self._user.refresh()

    def _all(self) -> dict[str, type[AgentTool]]:
        self._user.refresh()
        builtins = {n: c for n, c in self._builtins.items() if n not in self.switched_off}
        return {**builtins, **self._user.tools}

    def names(self) -> list[str]:
        """Names of every available tool, built-ins first."""
        return [spec.name for spec in self.specs()]

    def specs(self) -> list[ToolSpec]:
        """Declarations of every available tool: built-ins, user tools, then tool sources."""
        classes = self._all()
        specs = [cls.spec() for cls in classes.values()]
        for source in self._sources:
            specs.extend(source.specs(reserved=[s.name for s in specs]))
        return specs

    def get(self, name: str) -> type[AgentTool] | None:
        """The tool class called `name`, or None."""
        if name in self._builtins:
            return None if name in self.switched_off else self._builtins[name]
        self._user.refresh()
        return self._user.tools.get(name)

    def is_builtin(self, name: str) -> bool:
        """Whether `name` is one of Koroku's own tools (not a user tool)."""
        return name in self._builtins

    def is_read_only(self, name: str) -> bool:
        """Whether a source's tool promises to change nothing (e.g. MCP `readOnlyHint`)."""
        source = self._source_of(name) if self.get(name) is None else None
        return source is not None and source.is_read_only(name)

    def is_destructive(self, name: str) -> bool:
        """Whether a source's tool says it may delete or overwrite (MCP `destructiveHint`)."""
        source = self._source_of(name) if self.get(name) is None else None
        return source is not None and source.is_destructive(name)

    def describe(self, name: str) -> str | None:
        """Where a source's tool comes from (None for built-in and user tools)."""
        source = self._source_of(name) if self.get(name) is None else None
        return None if source is None else source.describe(name)

    async def run(
        self, name: str, args: Mapping[str, JsonValue] | None, ctx: ToolContext
    ) -> tuple[JsonObject, bool]:
        """Validate and run one call; return (response, ok). Never raises but for cancellation.

        `ok` is False when the tool could not run or answer (an error response, a timeout).
        Whether a call *failed* as every surface shows it is `FunctionResponsePart.failed`.
        A source's media parts come under MEDIA_KEY (take them out with `split_media`).
        """
        cls = self.get(name)
        source = self._source_of(name) if cls is None else None
        if source is not None:
            response, media = await source.call(name, dict(args or {}))
            ready = _json_ready(response)
            ok = "error" not in ready
            if media:
                ready[MEDIA_KEY] = [m.model_dump(exclude_none=True) for m in media]
            return ready, ok
        if cls is None:
            available = ", ".join(self.names())
            return tool_error(f"unknown tool {name!r}; available tools: {available}"), False
        try:
            tool = cls.model_validate(dict(args or {}))
        except ValidationError as exc:
            return tool_error(f"invalid arguments: {describe_validation_error(exc)}"), False
        try:
            result = await tool.execute(ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool's failure is its error result to the model
            log.exception("tool %s failed", name)
            return tool_error(f"{name} failed: {type(exc).__name__}: {exc}"), False
        if not isinstance(result, dict):
            log.error("tool %s returned %s instead of a dict", name, type(result).__name__)
            return tool_error(f"{name} returned {type(result).__name__}, not a dict"), False
        try:
            ready = _json_ready(result)
        except (TypeError, ValueError) as exc:
            return tool_error(f"{name} returned a result that is not JSON: {exc}"), False
        return ready, "error" not in ready and not ready.get("timed_out")

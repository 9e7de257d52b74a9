"""ToolRegistry: the built-in tools plus the user's own, and how a call is run safely."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from koroku_desktop.domain.model_io import ToolSpec
from koroku_desktop.tools.base import AgentTool, ToolContext, tool_error
from koroku_desktop.tools.builtin_bash import Bash
from koroku_desktop.tools.builtin_files import EditFile, ReadFile, WriteFile
from koroku_desktop.tools.recall import Recall
from koroku_desktop.tools.user_tools import UserToolLoader

log = logging.getLogger(__name__)

BUILTIN_TOOLS: tuple[type[AgentTool], ...] = (ReadFile, WriteFile, EditFile, Bash, Recall)


def describe_validation_error(exc: ValidationError) -> str:
    """Pydantic's errors as one readable line: `field: problem; other: problem`."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _json_ready(value: dict[str, Any]) -> dict[str, Any]:
    """The result as plain JSON values (paths and other objects become strings)."""
    ready: dict[str, Any] = json.loads(json.dumps(value, default=str))
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
        return {**self._builtins, **self._user.tools}

    def names(self) -> list[str]:
        """Names of every available tool, built-ins first."""
        return list(self._all())

    def specs(self) -> list[ToolSpec]:
        """Declarations of every available tool, built-ins first."""
        return [cls.spec() for cls in self._all().values()]

    def get(self, name: str) -> type[AgentTool] | None:
        """The tool class called `name`, or None."""
        if name in self._builtins:
            return self._builtins[name]
        self._user.refresh()
        return self._user.tools.get(name)

    def is_builtin(self, name: str) -> bool:
        """Whether `name` is one of Koroku's own tools (not a user tool)."""
        return name in self._builtins

    async def run(
        self, name: str, args: Mapping[str, Any] | None, ctx: ToolContext
    ) -> tuple[dict[str, Any], bool]:
        """Validate and run one call; return (response, ok). Never raises but for cancellation.

        `ok` is False when the tool could not run or answer (an error response, a timeout).
        Whether a call *failed* as every surface shows it is `FunctionResponsePart.failed`.
        """
        cls = self.get(name)
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
        except Exception as exc:
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

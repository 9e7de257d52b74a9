"""AgentTool: a pydantic model whose fields are the arguments and whose docstring describes it."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from koroku_desktop.domain.model_io import ToolSpec

RecallSearch = Callable[[str, int], Awaitable[list[dict[str, Any]]]]
"""Searches everything said before; injected by the composition root (used by `recall`)."""


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know about its surroundings."""

    workspace: Path
    data_dir: Path
    recall: RecallSearch | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def resolve(self, path: str) -> Path:
        """A user path: `~` expanded, relative paths against the workspace."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else (self.workspace / p)


class AgentTool(BaseModel):
    """Base of every tool. Subclasses declare argument fields and implement `execute`.

    The class name in snake_case is not used: set `name` explicitly. The docstring is the
    description the model reads.
    """

    model_config = ConfigDict(extra="forbid")

    name: ClassVar[str]
    needs_approval: ClassVar[bool] = True
    """Whether the default policy asks the user before running it."""

    async def execute(self, ctx: ToolContext) -> dict[str, Any]:
        """Run the tool; return a JSON-ready dict (errors as {"error": "..."})."""
        raise NotImplementedError

    @classmethod
    def spec(cls) -> ToolSpec:
        """The declaration offered to the model."""
        schema = cls.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        return ToolSpec(
            name=cls.name,
            description=inspect.cleandoc(cls.__doc__ or cls.name),
            parameters=schema,
        )

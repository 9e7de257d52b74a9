"""AgentTool: a pydantic model whose fields are the arguments and whose docstring describes it."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from koroku_desktop.domain.json_value import JsonObject
from koroku_desktop.domain.model_io import ToolSpec

RecallSearch = Callable[[str, int], Awaitable[list[JsonObject]]]
"""Searches everything said before; injected by the composition root (used by `recall`)."""
RememberFact = Callable[[str, str, Any], Awaitable[JsonObject]]
"""Stores a fact (subject, text, category) and says what it stored (used by `remember`)."""
ScheduleTask = Callable[[Any], Awaitable[JsonObject]]
"""Makes a scheduled task from a `tools.schedule.ScheduleRequest` (used by `schedule`)."""

# Schema keywords worth sending to the model; anything else (title, additionalProperties,
# pydantic extras) is dropped so that the declaration stays within what Gemini accepts.
_KEPT_KEYWORDS = frozenset(
    {
        "type",
        "description",
        "default",
        "enum",
        "format",
        "items",
        "properties",
        "required",
        "anyOf",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "nullable",
    }
)


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know about its surroundings."""

    workspace: Path
    data_dir: Path
    recall: RecallSearch | None = None
    remember: RememberFact | None = None
    """Stores a fact about the user (None: remembering facts is turned off)."""
    schedule: ScheduleTask | None = None
    """Makes a scheduled task (None: no task book here)."""

    def resolve(self, path: str) -> Path:
        """A user path: `~` expanded, relative paths against the workspace."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else (self.workspace / p)

    def subprocess_env(self, **extra: str) -> dict[str, str]:
        """The environment for a subprocess a tool starts: secrets and KOROKU_* left out.

        User tools should pass it as `env=` (see `koroku_desktop.tools.env` for the rule).
        """
        from koroku_desktop.tools.env import tool_environment

        return tool_environment(**extra)


def tool_error(message: str) -> JsonObject:
    """The shape every tool failure takes: `{"error": message}`."""
    return {"error": message}


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A pydantic JSON schema reduced to what a Gemini function declaration accepts.

    `$ref`s are inlined from `$defs`, titles and unsupported keywords are dropped, and the
    top level is always an object with `properties`.
    """
    defs: dict[str, Any] = schema.get("$defs", {})

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref.removeprefix("#/$defs/")
            if key in seen:  # recursive model: stop at an untyped object
                return {"type": "object"}
            merged = {**defs.get(key, {}), **{k: v for k, v in node.items() if k != "$ref"}}
            return walk(merged, (*seen, key))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key not in _KEPT_KEYWORDS:
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: walk(sub, seen) for name, sub in value.items()}
            elif key in ("items", "anyOf"):
                out[key] = walk(value, seen)
            else:
                out[key] = value
        return out

    cleaned: dict[str, Any] = walk(schema, ())
    cleaned.pop("description", None)
    cleaned["type"] = "object"
    cleaned.setdefault("properties", {})
    return cleaned


class AgentTool(BaseModel):
    """Base of every tool. Subclasses declare argument fields and implement `execute`.

    The class name in snake_case is not used: set `name` explicitly. The docstring is the
    description the model reads; field descriptions (`Field(description=...)`) describe the
    arguments.
    """

    model_config = ConfigDict(extra="forbid")

    name: ClassVar[str]
    needs_approval: ClassVar[bool] = True
    """Whether the default policy asks the user before running it (user tools always ask)."""

    async def execute(self, ctx: ToolContext) -> JsonObject:
        """Run the tool; return a JSON-ready dict (errors as {"error": "..."})."""
        raise NotImplementedError

    @classmethod
    def approval_for(cls, args: JsonObject, workspace: Path) -> str:
        """How a call with these arguments is approved: `policy` (the tool's usual rule),
        `ask` (ask unless granted), `always_ask` (ask even when granted always) or `no_change`
        (the call can change nothing, e.g. an edit with nothing to replace: it runs, fails
        with its reason, and nobody is asked about "(no change)")."""
        return "policy"

    @classmethod
    def spec(cls) -> ToolSpec:
        """The declaration offered to the model."""
        return ToolSpec(
            name=cls.name,
            description=inspect.cleandoc(cls.__doc__ or cls.name),
            parameters=clean_schema(cls.model_json_schema()),
        )

"""ToolRegistry.run validation, and the declarations offered to Gemini."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, Field

from koroku_desktop.tools.base import AgentTool, ToolContext, clean_schema
from koroku_desktop.tools.registry import BUILTIN_TOOLS, ToolRegistry

BUILTIN_NAMES = ["read_file", "write_file", "edit_file", "bash", "recall", "remember"]
_SCHEMA_KEYWORDS_GEMINI_REJECTS = {"title", "$ref", "$defs", "additionalProperties", "$schema"}


def _walk_schemas(node: Any) -> list[dict[str, Any]]:
    """Every schema object in `node` (property names are not schema keywords)."""
    if isinstance(node, list):
        return [s for item in node for s in _walk_schemas(item)]
    if not isinstance(node, dict):
        return []
    found = [node]
    for key, value in node.items():
        if key == "properties":
            found += [s for sub in value.values() for s in _walk_schemas(sub)]
        elif key in ("items", "anyOf"):
            found += _walk_schemas(value)
    return found


@pytest.mark.parametrize("cls", BUILTIN_TOOLS, ids=lambda c: c.name)
def test_builtin_spec_is_clean(cls: type[AgentTool]) -> None:
    spec = cls.spec()
    params = spec.parameters
    json.dumps(params)
    assert params["type"] == "object"
    assert set(params["required"]) <= set(params["properties"])
    for schema in _walk_schemas(params):
        assert not (_SCHEMA_KEYWORDS_GEMINI_REJECTS & set(schema)), schema
    for name, prop in params["properties"].items():
        assert prop.get("description"), f"{spec.name}.{name} has no description"
    assert len(spec.description) > 80
    assert "\n    " not in spec.description  # docstring indentation removed


def test_builtin_names_and_arguments() -> None:
    registry = ToolRegistry(None)
    specs = {s.name: s.parameters for s in registry.specs()}
    assert list(specs) == BUILTIN_NAMES
    assert set(specs["read_file"]["properties"]) == {"path"}
    assert set(specs["write_file"]["properties"]) == {"path", "content"}
    assert set(specs["edit_file"]["properties"]) == {"path", "old_str", "new_str", "replace_all"}
    assert specs["edit_file"]["required"] == ["path", "old_str", "new_str"]
    assert set(specs["bash"]["properties"]) == {"command", "working_dir", "timeout_seconds"}
    assert specs["bash"]["required"] == ["command"]
    assert specs["bash"]["properties"]["timeout_seconds"]["default"] == 30
    assert set(specs["recall"]["properties"]) == {"query", "limit"}
    assert all(registry.is_builtin(n) for n in BUILTIN_NAMES)


class Inner(BaseModel):
    label: str = Field(title="Label", description="A label.")


class Tree(BaseModel):
    children: list[Tree] = Field(default_factory=list)


class Nested(AgentTool):
    """Nested arguments."""

    name: ClassVar[str] = "nested"

    title: str = Field(description="A field literally called title.")
    inner: Inner
    items: list[Inner] = Field(default_factory=list)
    maybe: Inner | None = None
    tree: Tree | None = None


def test_clean_schema_inlines_refs_and_drops_titles() -> None:
    params = Nested.spec().parameters
    assert "title" in params["properties"]  # a property name, not the keyword
    assert params["properties"]["inner"]["properties"]["label"] == {
        "description": "A label.",
        "type": "string",
    }
    assert params["properties"]["items"]["items"]["type"] == "object"
    assert params["properties"]["maybe"]["anyOf"][1] == {"type": "null"}
    for schema in _walk_schemas(params):
        assert not (_SCHEMA_KEYWORDS_GEMINI_REJECTS & set(schema))
    json.dumps(params)


def test_tool_without_arguments_has_empty_properties() -> None:
    assert clean_schema({"type": "object", "title": "X"}) == {"type": "object", "properties": {}}


async def test_unknown_tool(ctx: ToolContext) -> None:
    response, ok = await ToolRegistry(None).run("launch_rockets", {}, ctx)
    assert ok is False
    assert "unknown tool 'launch_rockets'" in response["error"]
    assert "read_file" in response["error"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({}, "path: Field required"),
        ({"path": 5}, "path: Input should be a valid string"),
        ({"path": "a", "colour": "red"}, "colour: Extra inputs are not permitted"),
    ],
)
async def test_invalid_arguments_are_described(
    ctx: ToolContext, args: dict[str, Any], fragment: str
) -> None:
    response, ok = await ToolRegistry(None).run("read_file", args, ctx)
    assert ok is False
    assert response["error"].startswith("invalid arguments: ")
    assert fragment in response["error"]


async def test_none_args_mean_no_arguments(ctx: ToolContext) -> None:
    response, _ = await ToolRegistry(None).run("read_file", None, ctx)
    assert "path: Field required" in response["error"]


async def test_tool_error_dicts_are_not_ok(ctx: ToolContext) -> None:
    response, ok = await ToolRegistry(None).run("read_file", {"path": "missing"}, ctx)
    assert ok is False
    assert "file not found" in response["error"]


async def test_successful_call_is_ok(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("a", encoding="utf-8")
    response, ok = await ToolRegistry(None).run("read_file", {"path": "a.txt"}, ctx)
    assert ok is True
    assert response["content"] == "a"


def test_schedule_is_offered_only_where_a_front_end_runs_tasks() -> None:
    registry = ToolRegistry(None)
    assert registry.is_builtin("schedule") and "schedule" not in registry.names()
    registry.switched_off.discard("schedule")
    specs = {s.name: s.parameters for s in registry.specs()}
    assert set(specs["schedule"]["required"]) == {"title", "prompt", "kind", "rule"}
    assert specs["schedule"]["properties"]["kind"]["enum"] == ["once", "rrule", "cron"]

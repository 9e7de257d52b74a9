"""JSON as a type: what tools take and return, and what the model sees of them.

A tool's arguments come from the model as JSON and its result goes back as JSON, so the seam
between the agent and the tools is typed as JSON rather than `dict[str, Any]`.
"""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
"""Any JSON value."""
JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object: a tool's arguments, a tool's result."""

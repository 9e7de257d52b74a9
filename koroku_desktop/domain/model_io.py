"""What the agent asks of a chat model and what it gets back, free of any SDK type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from koroku_desktop.domain.events import MessageEvent


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model: name, description and JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request: the system instruction, the projected contents, the tools on offer."""

    model: str
    system_instruction: str
    contents: list[MessageEvent]
    tools: list[ToolSpec] = field(default_factory=list)
    thinking_level: str = ""
    """Gemini's thinking level ("minimal", "low", "medium", "high"; "" = the model's own)."""


ModelErrorKind = Literal["auth", "quota", "bad_request", "unavailable", "network", "unknown"]


class ModelError(Exception):
    """A failed model request, with a message fit to show a person (never the API key)."""

    def __init__(self, kind: ModelErrorKind, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind: ModelErrorKind = kind
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message

"""What the agent asks of a chat model and what it gets back, free of any SDK type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from koroku_desktop.domain.errors import KorokuError
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
    web_tools: tuple[str, ...] = ()
    """Gemini's built-in web tools to offer: `google_search`, `url_context`."""


_CUT_OFF = {
    "MAX_TOKENS": "it reached the model's output limit",
    "SAFETY": "Gemini stopped it for safety reasons",
    "RECITATION": "Gemini stopped it because it was reciting a source",
    "BLOCKLIST": "it contained a blocked term",
    "PROHIBITED_CONTENT": "Gemini stopped it as prohibited content",
    "SPII": "it contained sensitive personal information",
    "MALFORMED_FUNCTION_CALL": "the model produced a malformed tool call",
}
_COMPLETE = {None, "", "STOP", "FINISH_REASON_UNSPECIFIED"}


def finish_notice(finish_reason: str | None) -> str | None:
    """What to tell the person when a reply ended early (None: it ended normally).

    A reply cut off by MAX_TOKENS, SAFETY, RECITATION... would otherwise look complete.
    """
    if finish_reason in _COMPLETE:
        return None
    why = _CUT_OFF.get(str(finish_reason), "it ended early")
    return f"The answer is incomplete: {why} (finish reason {finish_reason})."


ModelErrorKind = Literal[
    "auth", "quota", "bad_request", "too_large", "unavailable", "network", "unknown"
]
"""`too_large`: the request's input is over the model's token limit (HTTP 400)."""


class ModelError(KorokuError):
    """A failed model request, with a message fit to show a person (never the API key)."""

    def __init__(self, kind: ModelErrorKind, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind: ModelErrorKind = kind
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message

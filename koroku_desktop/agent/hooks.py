"""Hooks front ends subscribe to. A failing hook is logged, never fatal to the turn."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, ParamSpec

from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.domain.model_io import ModelError, finish_notice
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart

log = logging.getLogger(__name__)

P = ParamSpec("P")


class Hook(Generic[P]):
    """A list of callbacks called in order; exceptions are logged and swallowed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._callbacks: list[Callable[P, object]] = []

    def append(self, callback: Callable[P, object]) -> None:
        """Subscribe."""
        self._callbacks.append(callback)

    def remove(self, callback: Callable[P, object]) -> None:
        """Unsubscribe (no error if absent)."""
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        for callback in list(self._callbacks):
            try:
                callback(*args, **kwargs)
            except Exception:  # one failing listener must not stop the others
                log.exception("hook %s failed in %r", self.name, callback)


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended."""

    text: str
    tool_calls: int = 0
    budget_exhausted: bool = False
    cancelled: bool = False
    error: ModelError | None = None
    last_seq: int = 0
    finish_reason: str | None = None
    """Why the final reply ended (`STOP`, `MAX_TOKENS`, `SAFETY`...), when known."""
    turn_id: str = ""

    @property
    def notice(self) -> str | None:
        """A sentence saying the answer was cut off, or None when it ended normally."""
        return finish_notice(self.finish_reason)

    @property
    def ok(self) -> bool:
        """True when the model answered (not cancelled, no error)."""
        return self.error is None and not self.cancelled


@dataclass(frozen=True)
class ContextMeter:
    """How much of the compaction threshold the live context uses."""

    used_tokens: int
    threshold_tokens: int
    last_prompt_tokens: int | None = None
    """The prompt size of the last request, as Gemini reported it."""
    last_cached_tokens: int | None = None
    """How much of it Gemini served from its prompt cache."""

    @property
    def fraction(self) -> float:
        """Used / threshold, 0..1+."""
        return self.used_tokens / self.threshold_tokens if self.threshold_tokens else 0.0

    def cache_note(self) -> str:
        """A sentence on how much of the last request came from the prompt cache ('' if unknown)."""
        prompt = self.last_prompt_tokens
        if not prompt:
            return ""
        cached = self.last_cached_tokens or 0
        return (
            f"Last request: {cached:,} of {prompt:,} prompt tokens served from Gemini's cache "
            f"({cached / prompt:.0%})."
        )


def last_reply_usage(messages: list[StoredEvent]) -> tuple[int | None, int | None]:
    """Prompt and cached tokens of the last reply with usage among `messages` (the meter's)."""
    for stored in reversed(messages):
        event = stored.event
        if isinstance(event, MessageEvent) and event.usage is not None:
            return event.usage.prompt_tokens, event.usage.cached_tokens
    return None, None


@dataclass
class AgentHooks:
    """Every hook of the agent, each a `Hook` to `.append(callback)` to."""

    on_event_appended: Hook[[StoredEvent]] = field(
        default_factory=lambda: Hook("on_event_appended")
    )
    on_text_delta: Hook[[str]] = field(default_factory=lambda: Hook("on_text_delta"))
    on_model_response: Hook[[MessageEvent]] = field(
        default_factory=lambda: Hook("on_model_response")
    )
    on_tool_call: Hook[[FunctionCallPart]] = field(default_factory=lambda: Hook("on_tool_call"))
    on_tool_result: Hook[[FunctionCallPart, FunctionResponsePart]] = field(
        default_factory=lambda: Hook("on_tool_result")
    )
    on_turn_started: Hook[[str | None]] = field(default_factory=lambda: Hook("on_turn_started"))
    on_turn_finished: Hook[[TurnResult]] = field(default_factory=lambda: Hook("on_turn_finished"))
    on_context_meter: Hook[[ContextMeter]] = field(default_factory=lambda: Hook("on_context_meter"))
    on_turn_waiting: Hook[[LockHolder]] = field(default_factory=lambda: Hook("on_turn_waiting"))
    on_reordered: Hook[[]] = field(default_factory=lambda: Hook("on_reordered"))
    """Called when catching up met events placed before ones already folded (a sync,
    here or in another process, pulled turns the hub placed before unpushed ones)."""
    on_retry: Hook[[int, int, str]] = field(default_factory=lambda: Hook("on_retry"))
    """Called with `(attempt, attempts, reason)` when a model request is tried again."""
    """Called when a turn must wait for another front end's (once per holder)."""

"""The narrow side of the agent that compaction talks to (`CompactionHost`).

Compaction decides after a turn and runs beside the next ones; it needs the live context,
the request the agent would send, the model to count and summarise with, and the turn lease.
Naming exactly that keeps compaction from importing the loop (the agent is one host).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from koroku_desktop.agent.facts import FactBook
from koroku_desktop.agent.hooks import AgentHooks, ContextMeter, TurnResult
from koroku_desktop.agent.options import AgentOptions
from koroku_desktop.agent.ports import ChatModel, EventLog, TurnLock
from koroku_desktop.agent.turn import Journal
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelRequest


class CompactionHost(Journal, Protocol):
    """A conversation compaction can fold: its log, live context, model, options, lease."""

    log: EventLog
    model: ChatModel
    options: AgentOptions
    hooks: AgentHooks
    overflowing: bool
    """The last request left older turns out (the history waits for a compaction)."""
    facts: FactBook | None
    """The facts about the user (a compaction lists new ones when they are on)."""
    conversation_title: str
    """How the conversation is called (its memory-file entries name it)."""
    after_turn: list[Callable[[TurnResult], Awaitable[object]]]
    """Steps run after every turn, inside the turn lock (compaction's check is one)."""

    @property
    def conversation_id(self) -> str:
        """The conversation compacted."""
        ...

    @property
    def busy(self) -> bool:
        """A turn runs or waits here."""
        ...

    @property
    def turn_lock(self) -> TurnLock | None:
        """The cross-process lease (compaction takes a second key on it)."""
        ...

    async def load(self) -> ContextView:
        """Build the live context once."""
        ...

    def hold_turn(self) -> AbstractAsyncContextManager[str]:
        """Own the conversation, caught up (the final append runs under it)."""
        ...

    def estimate_context_tokens(self) -> int:
        """The live context's size in tokens, estimated."""
        ...

    def context_meter(self) -> ContextMeter:
        """How much of the threshold the live context uses."""
        ...

    def request(self, *, contents: list[MessageEvent] | None = None) -> ModelRequest:
        """The request the next step would send (`contents` in place of the live ones)."""
        ...

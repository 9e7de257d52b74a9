"""A turn's own state and the narrow journal its parts write through.

The loop's parts (tool calls, supersede, the endings of a turn that could not finish) see
only these, never the whole `Agent`: the live context, the append that folds into it, and
what this turn has done so far. So they import nothing of the loop, and the loop imports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import Event, StoredEvent


class Journal(Protocol):
    """The live context of a conversation and the one way to add to it (the agent is one)."""

    @property
    def view(self) -> ContextView:
        """The live context, as folded so far."""
        ...

    async def append(self, events: Sequence[Event]) -> list[StoredEvent]:
        """Append to the log and fold into `view`; the stored events."""
        ...


@dataclass
class TurnState:
    """What one turn has done so far (for cancellation and the result)."""

    calls_made: int
    thinking_level: str = ""
    """Gemini's thinking level for this turn's requests ("" = the model's default)."""
    partial_text: list[str] = field(default_factory=list)
    executed: int = 0
    budget_exhausted: bool = False

"""Who holds a conversation's turn lease (a value shared by the agent's port and the store)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LockHolder:
    """Who holds (or last held) a conversation's turn lease."""

    owner: str
    front_end: str
    host: str
    pid: int
    turn_id: str
    expires_at: float

    def describe(self) -> str:
        """For people: 'the terminal', 'the chat window', 'quick ask'."""
        if self.front_end in ("ask", "chat", "compact", "terminal"):
            return "the terminal"
        if self.front_end == "app":
            return "the chat window"
        if self.front_end == "quick-ask":
            return "quick ask"
        return self.front_end

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
    remote: bool = False
    """Held on another device (read from the sync hub): `host` names it ("" if unknown)."""

    def describe(self) -> str:
        """For people: 'the terminal', 'the chat window', 'quick ask'."""
        if self.front_end in ("ask", "chat", "compact", "terminal"):
            return "the terminal"
        if self.front_end == "app":
            return "the chat window"
        if self.front_end == "quick-ask":
            return "quick ask"
        return self.front_end

    def location(self) -> str:
        """`describe()`, and the device when it is another: 'the terminal on laptop'."""
        return f"{self.describe()} on {self.host}" if self.remote and self.host else self.describe()

    def where(self) -> str:
        """For a waiting line: 'the terminal (pid 42)', 'the chat window on laptop (pid 42)';
        a pid that is not known (0) is left out rather than shown."""
        return f"{self.location()} (pid {self.pid})" if self.pid > 0 else self.location()

"""The pages of history a bridge shows: read from the conversation its agent talks in now."""

from __future__ import annotations

from collections.abc import Callable

from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.ports import LogReader
from koroku_desktop.domain.events import LogEntry
from koroku_desktop.ui.bridge import PageReader


def pages_of(log: LogReader, agent: Agent | Callable[[], Agent]) -> PageReader:
    """Reads up to `limit` entries before a seq (None: the newest) of the conversation
    `agent` talks in at the time of the read, in seq order (`agent` may be a function naming
    the agent of the conversation shown, which a switch replaces). Blocking."""
    current = agent if callable(agent) and not isinstance(agent, Agent) else (lambda: agent)

    def read(before_seq: int | None, limit: int) -> list[LogEntry]:
        page = log.entries(
            current().conversation_id, before_seq=before_seq, limit=limit, newest_first=True
        )
        page.reverse()
        return page

    return read

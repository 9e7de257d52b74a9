"""Synthetic chat logs for the benchmarks: realistic user and model turns (Markdown, code)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def make_log(home: Path, events: int) -> None:
    """A log of `events` realistic messages (user/model turns with Markdown and code)."""
    from koroku_desktop.store import SqliteEventLog

    home.mkdir(parents=True, exist_ok=True)
    log = SqliteEventLog(home / "koroku.db")
    fill(log, "default", events)
    log.close()


def fill(log: Any, conversation_id: str, events: int) -> None:
    """Append `events` realistic messages to a conversation (user/model turns with Markdown
    and code), 2,000 to a transaction."""
    from koroku_desktop.domain.events import MessageEvent
    from koroku_desktop.domain.parts import TextPart

    batch: list[Any] = []
    for i in range(events):
        if i % 2 == 0:
            text = f"Question {i}: how do I read a file in Python and count its lines?"
            batch.append(MessageEvent(role="user", origin="person", parts=[TextPart(text=text)]))
        else:
            text = (
                f"Answer {i}: open it with **`Path.read_text()`** and split:\n\n"
                "```python\nlines = Path('a.txt').read_text().splitlines()\nprint(len(lines))\n"
                "```\n\nThat reads the whole file at once."
            )
            batch.append(MessageEvent(role="model", origin="model", parts=[TextPart(text=text)]))
        if len(batch) == 2000:
            log.append(conversation_id, batch)
            batch = []
    if batch:
        log.append(conversation_id, batch)

"""Daily memory files: every compaction summary, appended to `<data dir>/memory/dd-mm-yyyy.md`.

The files are for people first (plain Markdown, one entry per summary, `[HH:MM]: summary`)
and are searched by the `recall` tool. Each entry is a `memory_edit` event in the log and the
files are written from the log (agent/memory_events.py); `append_memory` writes a file
directly, for data dirs without a log.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

MEMORY_FOLDER = "memory"


def memory_file(data_dir: Path, when: datetime) -> Path:
    """The memory file of the day of `when`: `<data dir>/memory/dd-mm-yyyy.md`."""
    return data_dir / MEMORY_FOLDER / f"{when:%d-%m-%Y}.md"


def memory_entry(summary: str, when: datetime, conversation: str = "") -> str:
    """One entry as written: `[HH:MM] in Title (abcd1234): summary` (naming the
    conversation it summarises, when given), followed by a blank line."""
    where = f" in {conversation}" if conversation else ""
    return f"[{when:%H:%M}]{where}: {summary.strip()}\n\n"


def append_memory(data_dir: Path, summary: str, when: datetime | None = None) -> Path:
    """Append `summary` to the day's memory file (creating the folder); return the file."""
    when = when or datetime.now()
    path = memory_file(data_dir, when)
    if not path.parent.is_dir():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
    # Memory files hold the summaries of private conversations: owner-only, like the log.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        out.write(memory_entry(summary, when))
    return path

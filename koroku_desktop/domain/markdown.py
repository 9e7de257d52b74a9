"""Log entries as Markdown: one renderer for the `koroku export` file and the history viewer."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from datetime import datetime
from typing import TextIO

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    DamagedEvent,
    LogEntry,
    MessageEvent,
    RejectedEvent,
)
from koroku_desktop.domain.parts import (
    CodeExecutionResultPart,
    ExecutableCodePart,
    FileDataPart,
    FunctionCallPart,
    FunctionResponsePart,
    InlineDataPart,
    Part,
    TextPart,
)

EXPORT_TOOL_CHARS = 4_000
"""Tool arguments and results longer than this are cut in the Markdown export."""


def when(ts: float, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A timestamp as local time ('?' when it cannot be shown)."""
    try:
        return datetime.fromtimestamp(ts).strftime(fmt)
    except (OverflowError, OSError, ValueError):
        return "?"


def one_line(text: str, limit: int) -> str:
    """`text` folded onto one line and cut to `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def fence(text: str, lang: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    ticks = "`" * max(3, max(runs, default=0) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def clip(text: str, limit: int, where: str = "the JSON export") -> str:
    """`text` cut to `limit` characters, saying how much more there is."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit:,} more characters; see {where})"


def quote(text: str) -> str:
    """`text` as a Markdown block quote."""
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def part_markdown(part: Part, tool_chars: int = EXPORT_TOOL_CHARS, where: str = "") -> str:
    """One part as Markdown: text, thoughts as italic quotes, tool calls and results as JSON."""
    where = where or "the JSON export"
    if isinstance(part, TextPart):
        if part.thought:
            return "\n".join(f"> *{line}*" if line else ">" for line in part.text.splitlines())
        return part.text
    if isinstance(part, FunctionCallPart):
        args = clip(json.dumps(part.args, ensure_ascii=False, indent=2), tool_chars, where)
        return f"**Tool call → `{part.name}`**\n\n{fence(args, 'json')}"
    if isinstance(part, FunctionResponsePart):
        head = f"**Tool {'failed' if part.failed else 'result'} ← `{part.name}`**"
        body = clip(json.dumps(part.response, ensure_ascii=False, indent=2), tool_chars, where)
        return f"{head}\n\n{fence(body, 'json')}"
    if isinstance(part, ExecutableCodePart):
        return fence(part.code, (part.language or "").lower())
    if isinstance(part, CodeExecutionResultPart):
        return f"*Code result ({part.outcome or 'unknown'})*\n\n{fence(part.output or '')}"
    if isinstance(part, InlineDataPart):
        size = f"{len(part.data):,} base64 chars"
        return f"*[inline data: {part.mime_type or 'unknown type'}, {size}]*"
    if isinstance(part, FileDataPart):
        return f"*[file: {part.file_uri} ({part.mime_type or 'unknown type'})]*"
    return f"*[{part.kind} part]*"


def speaker(event: MessageEvent) -> str:
    """Who said it: Koroku, You, or Tool results."""
    if event.role == "model":
        return "Koroku"
    return "You" if event.is_user_turn else "Tool results"


def message_body(event: MessageEvent, tool_chars: int = EXPORT_TOOL_CHARS, where: str = "") -> str:
    """The parts of a message as Markdown, separated by blank lines."""
    return "\n\n".join(t for t in (part_markdown(p, tool_chars, where) for p in event.parts) if t)


def markdown_entry(entry: LogEntry, tool_chars: int = EXPORT_TOOL_CHARS) -> str:
    """One log entry as Markdown, for the export file."""
    if isinstance(entry, DamagedEvent):
        return f"*#{entry.seq} · damaged {entry.kind} event, not shown: {entry.error}*"
    event = entry.event
    if isinstance(event, ClearedEvent):
        return f"---\n\n*#{entry.seq} · {when(entry.created_at)} · cleared: a fresh start*\n\n---"
    if isinstance(event, CompactionEvent):
        head = (
            f"> **Summary** of #{event.covers_up_to_seq} and before "
            f"(compacted at {when(entry.created_at, '%H:%M')} · #{entry.seq})"
        )
        return f"{head}\n>\n{quote(event.summary)}"
    if isinstance(event, RejectedEvent):
        return f"*#{entry.seq} · message #{event.rejected_seq} set aside: {event.reason}*"
    head = f"**{speaker(event)}** · {when(entry.created_at, '%H:%M')} · #{entry.seq}"
    return f"{head}\n\n{message_body(event, tool_chars)}"


def write_markdown(out: TextIO, entries: Iterable[LogEntry], *, live: bool) -> int:
    """Write the entries as a Markdown document a person can read; return how many."""
    scope = "the live context" if live else "the whole log"
    out.write(f"# Koroku conversation\n\n*Exported {when(time.time())}: {scope}.*\n")
    day = ""
    count = 0
    for entry in entries:
        entry_day = when(entry.created_at, "%A %d %B %Y")
        if entry_day != day:
            day = entry_day
            out.write(f"\n## {day}\n")
        out.write(f"\n{markdown_entry(entry)}\n")
        count += 1
    return count

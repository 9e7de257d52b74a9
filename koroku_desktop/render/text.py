"""Small text helpers every renderer shares: times, one-liners, clipping, JSON, fences, and
the one wording of notices and attachments that every surface shows (markers carry their
own words: render/markers.py)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from koroku_desktop.domain.attachment import human_size, kind_label
from koroku_desktop.domain.parts import compact_json as compact_json  # the one JSON line
from koroku_desktop.render import blocks as b

OK_MARK = "✓"
FAIL_MARK = "✗"


def mark(failed: bool) -> str:
    """The tool-result mark: ✗ for a failed call, ✓ otherwise."""
    return FAIL_MARK if failed else OK_MARK


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


def clip(text: str, limit: int, note: str = "") -> str:
    """`text` cut to `limit` characters, saying how much more there is (and where to look)."""
    if len(text) <= limit:
        return text
    where = f"; see {note}" if note else " cut"
    return f"{text[:limit]}\n… ({len(text) - limit:,} more characters{where})"


def indented_json(value: Any) -> str:
    """`value` as indented JSON, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def source_lines(block: b.SourcesBlock) -> list[str]:
    """A sources list as plain lines: `[1] Title (site) <uri>`, the searches run first (or
    after, as Google Search suggestions with their links)."""
    lines = []
    if block.queries and not block.suggestions:  # else the suggestions name them, linked
        lines.append("Searched: " + "; ".join(block.queries))
    for s in block.sources:
        site = f" ({s.site})" if s.site and s.site not in s.title else ""
        lines.append(f"[{s.number}] {s.title}{site} <{s.uri}>")
    lines.extend(f"Google Search: {query} <{uri}>" for query, uri in block.suggestions)
    return lines


def source_links_markdown(block: b.SourcesBlock) -> str:
    """A sources list as Markdown links: `[1] [Title](uri) · site`, one per line."""
    lines = []
    for s in block.sources:
        title = s.title.replace("[", "(").replace("]", ")")
        site = f" · {s.site}" if s.site and s.site not in s.title else ""
        lines.append(f"- [{s.number}] [{title}](<{s.uri}>){site}")
    if block.suggestions:
        chips = " · ".join(
            f"[{q.replace('[', '(').replace(']', ')')}](<{u}>)" for q, u in block.suggestions
        )
        lines.append(f"\n*Google Search:* {chips}")
    return "\n".join(lines)


def short_args(args: dict[str, Any], limit: int = 80) -> str:
    """A one-line summary of tool arguments: the command, path or query alone when there is one."""
    for key in ("command", "path", "query"):
        if isinstance(args.get(key), str):
            return one_line(args[key], limit)
    return one_line(", ".join(f"{k}={compact_json(v)}" for k, v in args.items()), limit)


def pretty(value: Any, limit: int = 6000) -> str:
    """Arguments or a result for display: `key: value` lines, multi-line strings below."""
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, str) and "\n" in item.strip():
                lines.append(f"{key}:\n{item.rstrip()}")
            elif isinstance(item, str):
                lines.append(f"{key}: {item}")
            else:
                lines.append(f"{key}: {compact_json(item)}")
        text = "\n".join(lines) or "(none)"
    else:
        text = indented_json(value)
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more chars)"


def fence(text: str, lang: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    ticks = "`" * max(3, max(runs, default=0) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def quote(text: str, italic: bool = False) -> str:
    """`text` as a Markdown block quote (each line in italics when `italic`)."""
    return "\n".join(
        (f"> *{line}*" if italic else f"> {line}") if line else ">" for line in text.splitlines()
    )


def notice_text(block: b.NoticeBlock) -> str:
    """A notice under an answer (cut off, stopped by a safety filter...)."""
    return f"⚠ {block.text}"


def attachment_text(block: b.AttachmentBlock) -> str:
    """What an attachment is: an attached file (name, kind, size), inline bytes (type and
    size) or an uploaded file."""
    mime = block.mime_type or "unknown type"
    if block.sha256 is not None:
        size = human_size(block.size)
        return f"Attached: {block.name or 'a file'} ({kind_label(mime)}, {size})"
    if block.uri is None:
        return f"inline data: {mime}, {block.size:,} bytes"
    return f"file: {block.uri} ({mime})"

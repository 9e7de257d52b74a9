"""Log entries as Markdown: one renderer for the `koroku export` file and the history viewer."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TextIO, assert_never

from koroku_desktop.domain.events import LogEntry
from koroku_desktop.render import blocks as b
from koroku_desktop.render.fold import entry_view
from koroku_desktop.render.text import (
    attachment_text,
    clip,
    fence,
    indented_json,
    notice_text,
    quote,
    source_links_markdown,
    when,
)

EXPORT_TOOL_CHARS = 4_000
"""Tool arguments and results longer than this are cut in the Markdown export."""

AttachmentLink = Callable[[b.AttachmentBlock], str | None]
"""Where an attached file's copy is for a Markdown link (a relative path or a file URL)."""

SPEAKERS = {"user": "You", "model": "Koroku", "tools": "Tool results", "repair": "Tool results"}


def attachment_markdown(block: b.AttachmentBlock, link: AttachmentLink | None = None) -> str:
    """An attachment as Markdown: an image shown, another file linked, when `link` has its copy."""
    target = link(block) if link is not None and block.sha256 is not None else None
    if target is None:
        return f"*[{attachment_text(block)}]*"
    label = attachment_text(block)
    if (block.mime_type or "").startswith("image/"):
        return f"![{block.name or 'image'}](<{target}>)\n\n*{label}*"
    return f"[{label}](<{target}>)"


def block_markdown(
    block: b.Block,
    tool_chars: int = EXPORT_TOOL_CHARS,
    where: str = "the JSON export",
    link: AttachmentLink | None = None,
) -> str:
    """One block as Markdown: thoughts as italic quotes, tool calls and results as JSON."""
    match block:
        case b.TextBlock(text=text):
            return text
        case b.ThoughtBlock(text=text):
            return quote(text, italic=True)
        case b.ToolCallBlock(name=name, args=args):
            body = clip(indented_json(args), tool_chars, where)
            return f"**Tool call → `{name}`**\n\n{fence(body, 'json')}"
        case b.ToolResultBlock(name=name, response=response, failed=failed):
            body = clip(indented_json(response), tool_chars, where)
            head = f"**Tool {'failed' if failed else 'result'} ← `{name}`**"
            return f"{head}\n\n{fence(body, 'json')}"
        case b.CodeBlock(text=text, output=False, language=language):
            return fence(text, language)
        case b.CodeBlock(text=text, outcome=outcome):
            return f"*Code result ({outcome or 'unknown'})*\n\n{fence(text)}"
        case b.AttachmentBlock():
            return attachment_markdown(block, link)
        case b.UnknownBlock():
            return "*[a part of an unknown kind]*"
        case b.RememberedBlock(passages=passages):
            lines = "\n".join(f"- #{p.seq} ({p.when}, {p.who}): {p.text}" for p in passages)
            return f"*Remembered from earlier:*\n\n{lines}"
        case b.Marker():
            return marker_markdown(block)
        case b.NoticeBlock():
            return f"*{notice_text(block)}*"
        case b.SourcesBlock(queries=queries, suggestions=suggestions):
            shown = queries and not suggestions  # else the suggestions name them, as links
            searched = f"\n\n*Searched: {'; '.join(queries)}*" if shown else ""
            return f"**Sources**{searched}\n\n{source_links_markdown(block)}"
        case _:
            assert_never(block)


def marker_markdown(marker: b.Marker) -> str:
    """A marker as Markdown, by its style: a summary quoted under a bold title, a record
    under an italic one, a divider between rules, a note or an aside in italics."""
    match marker.style:
        case "summary":
            return f"> **{marker.title}**\n>\n{quote(marker.detail)}"
        case "record":
            return f"> *{marker.title}*\n>\n{quote(marker.detail)}"
        case "divider":
            return f"---\n\n*{marker.title}*\n\n---"
        case "note" | "aside":
            return f"*{marker.title}*"
        case _:
            assert_never(marker.style)


def blocks_markdown(
    blocks: Iterable[b.Block],
    tool_chars: int = EXPORT_TOOL_CHARS,
    where: str = "the JSON export",
    link: AttachmentLink | None = None,
) -> str:
    """Blocks as Markdown, separated by blank lines."""
    texts = (block_markdown(x, tool_chars, where, link) for x in blocks)
    return "\n\n".join(t for t in texts if t)


def markdown_entry(
    entry: LogEntry, tool_chars: int = EXPORT_TOOL_CHARS, link: AttachmentLink | None = None
) -> str:
    """One log entry as Markdown, for the export file: a headed message, or a marker."""
    view = entry_view(entry)
    body = blocks_markdown(view.blocks, tool_chars, link=link)
    if view.speaker == "marker":
        return f"{body}\n\n*#{view.seq} · {when(view.created_at)}*"
    head = f"**{SPEAKERS[view.speaker]}** · {when(view.created_at, '%H:%M')} · #{view.seq}"
    return f"{head}\n\n{body}"


def write_markdown(
    out: TextIO, entries: Iterable[LogEntry], *, live: bool, link: AttachmentLink | None = None
) -> int:
    """Write the entries as a Markdown document a person can read; return how many.

    `link` says where each attached file's copy is (None: attachments are named only)."""
    scope = "the live context" if live else "the whole log"
    out.write(f"# Koroku conversation\n\n*Exported {when(time.time())}: {scope}.*\n")
    day = ""
    count = 0
    for entry in entries:
        entry_day = when(entry.created_at, "%A %d %B %Y")
        if entry_day != day:
            day = entry_day
            out.write(f"\n## {day}\n")
        out.write(f"\n{markdown_entry(entry, link=link)}\n")
        count += 1
    return count

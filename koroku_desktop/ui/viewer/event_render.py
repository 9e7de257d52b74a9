"""How the viewer shows one log entry: a one-line summary, readable Markdown and raw JSON."""

from __future__ import annotations

import json
from typing import assert_never

from koroku_desktop.domain.events import (
    DamagedEvent,
    LogEntry,
    MessageEvent,
    StoredEvent,
    dump_event,
)
from koroku_desktop.render import blocks as b
from koroku_desktop.render.fold import entry_view, event_blocks
from koroku_desktop.render.markdown import AttachmentLink, blocks_markdown
from koroku_desktop.render.markers import token_change as token_change  # for the panels
from koroku_desktop.render.text import (
    attachment_text,
    compact_json,
    mark,
    notice_text,
    one_line,
    quote,
    when,
)

SUMMARY_CHARS = 160
TOOL_RESULT_CHARS = 6_000
ROLES = {"user": "you", "model": "Koroku", "tools": "tools", "repair": "repair"}


def kind_label(entry: LogEntry) -> str:
    """`message`, `compaction`, `cleared`, or `damaged` for a row that cannot be read."""
    if isinstance(entry, DamagedEvent):
        return "damaged"
    return entry.event.kind


def role_label(entry: LogEntry) -> str:
    """Who produced the event: you, Koroku, tools, repair, summary..."""
    view = entry_view(entry)
    return ROLES[view.speaker] if view.marker is None else view.marker.by


def block_summary(block: b.Block) -> str:
    """One block on (part of) one line, for the timeline's table."""
    match block:
        case b.TextBlock(text=text):
            return text
        case b.ThoughtBlock(text=text):
            return f"(thought) {text}"
        case b.ToolCallBlock(name=name, args=args):
            return f"→ {name}({compact_json(args)})"
        case b.ToolResultBlock(name=name, response=response, failed=failed):
            return f"{mark(failed)} {name}: {compact_json(response)}"
        case b.CodeBlock(text=text, output=False):
            return f"[code] {text}"
        case b.CodeBlock(text=text):
            return f"[code result] {text}"
        case b.AttachmentBlock():
            return f"[{attachment_text(block)}]"
        case b.UnknownBlock():
            return "[unknown part]"
        case b.RememberedBlock(passages=passages):
            return "[remembered " + ", ".join(f"#{p.seq}" for p in passages) + "]"
        case b.Marker(title=title, detail=""):
            return one_line(title, 240)
        case b.Marker(title=title, detail=detail):
            return f"{title}: {one_line(detail.replace('**', ''), 600)}"
        case b.NoticeBlock():
            return notice_text(block)
        case b.SourcesBlock(sources=sources):
            return "[sources: " + ", ".join(s.site for s in sources) + "]"
        case _:
            assert_never(block)


def summary(entry: LogEntry) -> str:
    """One line for the timeline's table."""
    view = entry_view(entry)
    pieces = [block_summary(x) for x in view.blocks]
    if view.speaker == "marker":
        return "  ".join(pieces)
    return one_line("  ".join(p for p in pieces if p), SUMMARY_CHARS) or "(empty)"


def attachment_url(block: b.AttachmentBlock) -> str | None:
    """`attachment:<sha256>`: the detail pane's link to an attached file (its thumbnail)."""
    return None if block.sha256 is None else f"attachment:{block.sha256}"


def _message_markdown(event: MessageEvent, link: AttachmentLink | None = None) -> str:
    body = blocks_markdown(event_blocks(event), TOOL_RESULT_CHARS, "the raw JSON", link)
    if event.usage is not None and event.usage.prompt_tokens is not None:
        u = event.usage
        body += (
            f"\n\n*{u.model or 'model'}: {u.prompt_tokens:,} tokens in, "
            f"{u.output_tokens or 0:,} out*"
        )
    return body or "*(empty message)*"


def marker_readable(marker: b.Marker) -> str:
    """A marker for the detail pane: its title in bold with what it says about itself and
    its detail quoted, or (without a detail) what it says about itself."""
    if not marker.detail:
        return marker.explanation or marker.title
    about = f" ({marker.explanation})." if marker.explanation else ""
    return f"**{marker.title}**{about}\n\n{quote(marker.detail)}"


def readable(entry: LogEntry, link: AttachmentLink | None = None) -> str:
    """The entry as Markdown for the detail pane (`link`: where attached files point)."""
    head = f"### #{entry.seq} · {kind_label(entry)} · {when(entry.created_at)}"
    view = entry_view(entry)
    if view.marker is not None:
        return f"{head}\n\n{marker_readable(view.marker)}"
    assert isinstance(entry, StoredEvent) and isinstance(entry.event, MessageEvent)
    return f"{head} · {role_label(entry)}\n\n{_message_markdown(entry.event, link)}"


def raw_json(entry: LogEntry) -> str:
    """The row as stored: the payload JSON, or a damaged row's raw text."""
    if isinstance(entry, DamagedEvent):
        try:
            return json.dumps(json.loads(entry.raw), ensure_ascii=False, indent=2)
        except ValueError:
            return entry.raw
    record = {
        "seq": entry.seq,
        "conversation_id": entry.conversation_id,
        "created_at": entry.created_at,
        "payload": dump_event(entry.event),
    }
    return json.dumps(record, ensure_ascii=False, indent=2)

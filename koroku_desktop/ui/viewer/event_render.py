"""How the viewer shows one log entry: a one-line summary, readable Markdown and raw JSON."""

from __future__ import annotations

import json
from typing import assert_never

from koroku_desktop.domain.events import (
    CompactionEvent,
    DamagedEvent,
    LogEntry,
    MessageEvent,
    StoredEvent,
    dump_event,
)
from koroku_desktop.render import blocks as b
from koroku_desktop.render.fold import entry_view, event_blocks
from koroku_desktop.render.markdown import AttachmentLink, blocks_markdown
from koroku_desktop.render.text import (
    attachment_text,
    compact_json,
    mark,
    marker_text,
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
    match view.marker:
        case None:
            return ROLES[view.speaker]
        case b.CompactionBlock():
            return "summary"
        case b.ClearedBlock():
            return "you"
        case b.RejectedBlock() | b.SupersededBlock():
            return "Koroku"
        case b.DismissedBlock():
            return "you"
        case b.DamagedBlock():
            return ""
        case b.MemoryEditBlock(source=source):
            return {"compaction": "summary", "person": "you"}.get(source or "", "memory")
        case _:
            assert_never(view.marker)


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
        case b.CompactionBlock(summary=text):
            return f"{marker_text(block)}: {one_line(text.replace('**', ''), 600)}"
        case (
            b.ClearedBlock()
            | b.RejectedBlock()
            | b.DamagedBlock()
            | b.SupersededBlock()
            | b.DismissedBlock()
        ):
            return one_line(marker_text(block), 240)
        case b.MemoryEditBlock(text=text):
            return f"{marker_text(block)}: {one_line(text, 600)}"
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


def _marker_readable(marker: b.MarkerBlock) -> str:
    match marker:
        case b.DamagedBlock(error=error):
            return (
                "**This row is damaged** and cannot be read by this version of Koroku. "
                "It is kept in the log untouched and skipped by the model.\n\n"
                f"Reason: `{error}`\n\nSee the raw JSON for what the row holds."
            )
        case b.RejectedBlock(rejected_seq=rejected, reason=reason):
            return (
                f"Message #{rejected} was set aside: it stays in the log but is no longer sent "
                f"to the model.\n\nReason: {reason}"
            )
        case b.DismissedBlock(passage_seq=passage, surfaced_seq=surfaced):
            return (
                f"You dismissed remembered passage #{passage} (surfaced with message "
                f"#{surfaced}) as not relevant. That message still carries it as sent; "
                "Koroku does not surface it again in this conversation."
            )
        case b.SupersededBlock(turn_id=turn_id):
            return (
                f"{marker_text(marker)}.\n\nThe replaced turn (`{turn_id}`) is shown above as it "
                "was; it can still be searched and recalled."
            )
        case b.ClearedBlock():
            return (
                "The conversation was cleared here. Koroku stopped seeing everything "
                "before this point; nothing was deleted and it can still be recalled."
            )
        case b.CompactionBlock(covered=None):
            return (
                f"**Summary of #{marker.covers_up_to_seq} and before** "
                f"(the live context keeps #{marker.kept_from_seq} onward; "
                f"{token_change(marker)}).\n\n{quote(marker.summary)}"
            )
        case b.CompactionBlock():
            return (
                f"**{marker_text(marker)}** (the messages it folded in show *summarised* "
                f"in the Context column; {token_change(marker)}).\n\n{quote(marker.summary)}"
            )
        case b.MemoryEditBlock(text=text):
            return f"**{marker_text(marker)}**\n\n{quote(text)}"
        case _:
            assert_never(marker)


def readable(entry: LogEntry, link: AttachmentLink | None = None) -> str:
    """The entry as Markdown for the detail pane (`link`: where attached files point)."""
    head = f"### #{entry.seq} · {kind_label(entry)} · {when(entry.created_at)}"
    view = entry_view(entry)
    if view.marker is not None:
        return f"{head}\n\n{_marker_readable(view.marker)}"
    assert isinstance(entry, StoredEvent) and isinstance(entry.event, MessageEvent)
    return f"{head} · {role_label(entry)}\n\n{_message_markdown(entry.event, link)}"


def token_change(event: CompactionEvent | b.CompactionBlock) -> str:
    """`120,000 → 8,000 tokens` (or what is known of it)."""
    before = f"{event.tokens_before:,}" if event.tokens_before is not None else "?"
    after = f"{event.tokens_after:,}" if event.tokens_after is not None else "?"
    return f"{before} → {after} tokens"


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

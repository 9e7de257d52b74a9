"""How the viewer shows one log entry: a one-line summary, readable Markdown and raw JSON."""

from __future__ import annotations

import json

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    DamagedEvent,
    LogEntry,
    MessageEvent,
    RejectedEvent,
    dump_event,
)
from koroku_desktop.domain.markdown import message_body, one_line, quote, when
from koroku_desktop.domain.parts import (
    CodeExecutionResultPart,
    ExecutableCodePart,
    FunctionCallPart,
    FunctionResponsePart,
    Part,
    TextPart,
)

SUMMARY_CHARS = 160
TOOL_RESULT_CHARS = 6_000


def kind_label(entry: LogEntry) -> str:
    """`message`, `compaction`, `cleared`, or `damaged` for a row that cannot be read."""
    if isinstance(entry, DamagedEvent):
        return "damaged"
    return entry.event.kind


def role_label(entry: LogEntry) -> str:
    """Who produced the event: you, Koroku, tools, repair, summary..."""
    if isinstance(entry, DamagedEvent):
        return ""
    event = entry.event
    if isinstance(event, CompactionEvent):
        return "summary"
    if isinstance(event, ClearedEvent):
        return "you"
    if isinstance(event, RejectedEvent):
        return "Koroku"
    if event.role == "model":
        return "Koroku"
    if event.origin == "repair":
        return "repair"
    return "you" if event.is_user_turn else "tools"


def _part_summary(part: Part) -> str:
    if isinstance(part, TextPart):
        return f"(thought) {part.text}" if part.thought else part.text
    if isinstance(part, FunctionCallPart):
        return f"→ {part.name}({json.dumps(part.args, ensure_ascii=False)})"
    if isinstance(part, FunctionResponsePart):
        mark = "✗" if part.failed else "✓"
        return f"{mark} {part.name}: {json.dumps(part.response, ensure_ascii=False)}"
    if isinstance(part, ExecutableCodePart):
        return f"[code] {part.code}"
    if isinstance(part, CodeExecutionResultPart):
        return f"[code result] {part.output or ''}"
    return f"[{part.kind}]"


def summary(entry: LogEntry) -> str:
    """One line for the timeline's table."""
    if isinstance(entry, DamagedEvent):
        return f"⚠ damaged {entry.kind} row, cannot be read: {one_line(entry.error, 120)}"
    event = entry.event
    if isinstance(event, ClearedEvent):
        return "Conversation cleared — a fresh start (nothing was deleted)"
    if isinstance(event, CompactionEvent):
        text = one_line(event.summary.replace("**", ""), 600)
        return f"Summary of #{event.covers_up_to_seq} and before: {text}"
    if isinstance(event, RejectedEvent):
        return f"Message #{event.rejected_seq} set aside: {one_line(event.reason, 200)}"
    pieces = [_part_summary(p) for p in event.parts]
    return one_line("  ".join(p for p in pieces if p), SUMMARY_CHARS) or "(empty)"


def _message_markdown(event: MessageEvent) -> str:
    body = message_body(event, TOOL_RESULT_CHARS, "the raw JSON")
    if event.usage is not None and event.usage.prompt_tokens is not None:
        u = event.usage
        body += (
            f"\n\n*{u.model or 'model'}: {u.prompt_tokens:,} tokens in, "
            f"{u.output_tokens or 0:,} out*"
        )
    return body or "*(empty message)*"


def readable(entry: LogEntry) -> str:
    """The entry as Markdown for the detail pane."""
    head = f"### #{entry.seq} · {kind_label(entry)} · {when(entry.created_at)}"
    if isinstance(entry, DamagedEvent):
        return (
            f"{head}\n\n**This row is damaged** and cannot be read by this version of Koroku. "
            f"It is kept in the log untouched and skipped by the model.\n\n"
            f"Reason: `{entry.error}`\n\nSee the raw JSON for what the row holds."
        )
    event = entry.event
    role = role_label(entry)
    if isinstance(event, ClearedEvent):
        return (
            f"{head}\n\nThe conversation was cleared here. Koroku stopped seeing everything "
            "before this point; nothing was deleted and it can still be recalled."
        )
    if isinstance(event, CompactionEvent):
        tokens = token_change(event)
        quoted = quote(event.summary)
        return (
            f"{head}\n\n**Summary of #{event.covers_up_to_seq} and before** "
            f"(the live context keeps #{event.kept_from_seq} onward; {tokens}).\n\n{quoted}"
        )
    if isinstance(event, RejectedEvent):
        return (
            f"{head}\n\nMessage #{event.rejected_seq} was set aside: it stays in the log but is "
            f"no longer sent to the model.\n\nReason: {event.reason}"
        )
    return f"{head} · {role}\n\n{_message_markdown(event)}"


def token_change(event: CompactionEvent) -> str:
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

"""How the viewer shows one log entry: a one-line summary, readable Markdown and raw JSON."""

from __future__ import annotations

import json
import re
from datetime import datetime

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    DamagedEvent,
    LogEntry,
    MessageEvent,
    dump_event,
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

SUMMARY_CHARS = 160
TOOL_RESULT_CHARS = 6_000


def when(ts: float, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    """A timestamp as local time."""
    try:
        return datetime.fromtimestamp(ts).strftime(fmt)
    except (OverflowError, OSError, ValueError):
        return "?"


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
    if event.role == "model":
        return "Koroku"
    if event.origin == "repair":
        return "repair"
    return "you" if event.is_user_turn else "tools"


def _one_line(text: str, limit: int = SUMMARY_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _part_summary(part: Part) -> str:
    if isinstance(part, TextPart):
        return f"(thought) {part.text}" if part.thought else part.text
    if isinstance(part, FunctionCallPart):
        return f"→ {part.name}({json.dumps(part.args, ensure_ascii=False)})"
    if isinstance(part, FunctionResponsePart):
        mark = "✗" if _failed(part) else "✓"
        return f"{mark} {part.name}: {json.dumps(part.response, ensure_ascii=False)}"
    if isinstance(part, ExecutableCodePart):
        return f"[code] {part.code}"
    if isinstance(part, CodeExecutionResultPart):
        return f"[code result] {part.output or ''}"
    return f"[{part.kind}]"


def _failed(part: FunctionResponsePart) -> bool:
    resp = part.response
    return "error" in resp or resp.get("exit_code", 0) not in (0, None)


def summary(entry: LogEntry) -> str:
    """One line for the timeline's table."""
    if isinstance(entry, DamagedEvent):
        return f"⚠ damaged {entry.kind} row, cannot be read: {_one_line(entry.error, 120)}"
    event = entry.event
    if isinstance(event, ClearedEvent):
        return "Conversation cleared — a fresh start (nothing was deleted)"
    if isinstance(event, CompactionEvent):
        text = _one_line(event.summary.replace("**", ""), 600)
        return f"Summary of #{event.covers_up_to_seq} and before: {text}"
    pieces = [_part_summary(p) for p in event.parts]
    return _one_line("  ".join(p for p in pieces if p)) or "(empty)"


def _fence(text: str, lang: str = "") -> str:
    runs = [len(r) for r in re.findall(r"`+", text)]
    ticks = "`" * max(3, max(runs, default=0) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit:,} more characters — see the raw JSON)"


def _part_markdown(part: Part) -> str:
    if isinstance(part, TextPart):
        if part.thought:
            return "\n".join(f"> *{line}*" if line else ">" for line in part.text.splitlines())
        return part.text
    if isinstance(part, FunctionCallPart):
        args = json.dumps(part.args, ensure_ascii=False, indent=2)
        return f"**Tool call → `{part.name}`**\n\n{_fence(_clip(args, TOOL_RESULT_CHARS), 'json')}"
    if isinstance(part, FunctionResponsePart):
        state = "failed" if _failed(part) else "result"
        head = f"**Tool {state} ← `{part.name}`**"
        if part.call_args:
            head += f" — called with `{_one_line(json.dumps(part.call_args), 200)}`"
        body = json.dumps(part.response, ensure_ascii=False, indent=2)
        return f"{head}\n\n{_fence(_clip(body, TOOL_RESULT_CHARS), 'json')}"
    if isinstance(part, ExecutableCodePart):
        return _fence(part.code, (part.language or "").lower())
    if isinstance(part, CodeExecutionResultPart):
        return f"*Code result ({part.outcome or 'unknown'})*\n\n{_fence(part.output or '')}"
    if isinstance(part, InlineDataPart):
        return (
            f"*[inline data: {part.mime_type or 'unknown type'}, {len(part.data):,} base64 chars]*"
        )
    if isinstance(part, FileDataPart):
        return f"*[file: {part.file_uri} ({part.mime_type or 'unknown type'})]*"
    return f"*[{part.kind} part]*"


def _message_markdown(event: MessageEvent) -> str:
    body = "\n\n".join(t for t in (_part_markdown(p) for p in event.parts) if t)
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
        quoted = "\n".join(f"> {line}" if line else ">" for line in event.summary.splitlines())
        return (
            f"{head}\n\n**Summary of #{event.covers_up_to_seq} and before** "
            f"(the live context keeps #{event.kept_from_seq} onward; {tokens}).\n\n{quoted}"
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

"""Chat items: what one row of the conversation view shows, built from log events.

Pure Python (no Qt), so building 10,000 rows is cheap and testable on its own.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    DamagedEvent,
    LogEntry,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
)
from koroku_desktop.domain.model_io import finish_notice
from koroku_desktop.domain.parts import (
    CodeExecutionResultPart,
    ExecutableCodePart,
    FileDataPart,
    FunctionCallPart,
    FunctionResponsePart,
    InlineDataPart,
    TextPart,
)

ItemKind = Literal["user", "model", "thought", "tool", "compaction", "cleared", "notice"]
ToolStatus = Literal["pending", "running", "ok", "error"]

_uids = itertools.count(1)


@dataclass(eq=False)
class ChatItem:
    """One row: a message, a thought, a tool card, a compaction or clear marker, a notice."""

    kind: ItemKind
    text: str = ""
    seq: int | None = None
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    status: ToolStatus = "pending"
    result: dict[str, Any] | None = None
    expanded: bool = False
    streaming: bool = False
    created_at: float = 0.0
    uid: int = field(default_factory=lambda: next(_uids))
    version: int = 0

    def touch(self) -> None:
        """Mark the content changed (invalidates cached layouts)."""
        self.version += 1

    @property
    def cache_key(self) -> tuple[int, int, bool]:
        """What a cached rendering of this item depends on."""
        return (self.uid, self.version, self.expanded)


def short_args(args: dict[str, Any], limit: int = 80) -> str:
    """A one-line summary of tool arguments: the command or path first."""
    for key in ("command", "path", "query"):
        if key in args and isinstance(args[key], str):
            value = " ".join(str(args[key]).split())
            return value if len(value) <= limit else value[: limit - 1] + "…"
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def response_failed(response: dict[str, Any]) -> bool:
    """Whether a tool response reports a failure."""
    if "error" in response:
        return True
    code = response.get("exit_code")
    return isinstance(code, int) and code != 0


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
                lines.append(f"{key}: {json.dumps(item, ensure_ascii=False, default=str)}")
        text = "\n".join(lines) or "(none)"
    else:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more chars)"


def items_for_message(stored: StoredEvent, event: MessageEvent) -> list[ChatItem]:
    """The rows a message event adds (function responses add none: they update cards)."""
    items: list[ChatItem] = []
    role_kind: ItemKind = "user" if event.role == "user" else "model"
    at = stored.created_at

    def add_text(kind: ItemKind, text: str) -> None:
        if items and items[-1].kind == kind and kind in ("model", "thought", "user"):
            items[-1].text += text
        else:
            items.append(ChatItem(kind=kind, text=text, seq=stored.seq, created_at=at))

    for part in event.parts:
        if isinstance(part, TextPart):
            if part.text:
                add_text("thought" if part.thought else role_kind, part.text)
        elif isinstance(part, FunctionCallPart):
            items.append(
                ChatItem(
                    kind="tool",
                    tool=part.name,
                    args=dict(part.args),
                    call_id=part.id,
                    seq=stored.seq,
                    created_at=at,
                )
            )
        elif isinstance(part, InlineDataPart):
            add_text(role_kind, f"\n\n*[attachment: {part.mime_type or 'data'}]*\n\n")
        elif isinstance(part, FileDataPart):
            add_text(role_kind, f"\n\n*[file: {part.file_uri}]*\n\n")
        elif isinstance(part, ExecutableCodePart):
            add_text(role_kind, f"\n\n```{(part.language or '').lower()}\n{part.code}\n```\n\n")
        elif isinstance(part, CodeExecutionResultPart):
            add_text(role_kind, f"\n\n```\n{part.output or ''}\n```\n\n")
    for item in items:
        item.text = item.text.strip() if item.kind != "tool" else item.text
    notice = finish_notice(event.finish_reason)
    if notice is not None:
        items.append(ChatItem(kind="notice", text=f"⚠ {notice}", seq=stored.seq, created_at=at))
    return [i for i in items if i.kind == "tool" or i.text]


def compaction_item(stored: StoredEvent, event: CompactionEvent) -> ChatItem:
    """A marker for a compaction; its summary expands on click."""
    detail = ""
    if event.tokens_before and event.tokens_after:
        detail = f" · {event.tokens_before:,} → {event.tokens_after:,} tokens"
    return ChatItem(
        kind="compaction",
        text=event.summary,
        tool=f"Earlier conversation summarised{detail}",
        seq=stored.seq,
        created_at=stored.created_at,
    )


class ToolCardIndex:
    """Finds the card a function response answers: by call id, else the oldest open one."""

    def __init__(self) -> None:
        self._open: list[ChatItem] = []

    def add(self, item: ChatItem) -> None:
        """Remember a card that waits for its response."""
        self._open.append(item)

    def resolve(self, part: FunctionResponsePart, ok: bool | None = None) -> ChatItem | None:
        """Close the matching card with the response; return it (None when not shown)."""
        match = None
        for item in self._open:
            if part.id is not None and item.call_id == part.id:
                match = item
                break
        if match is None:
            match = next((i for i in self._open if i.tool == part.name), None)
        if match is None:
            return None
        self._open.remove(match)
        failed = response_failed(part.response) if ok is None else not ok
        match.status = "error" if failed else "ok"
        match.result = dict(part.response)
        if part.call_args is not None:
            match.args = dict(part.call_args)
        match.touch()
        return match

    def find_open(self, call: FunctionCallPart) -> ChatItem | None:
        """The open card of a call (by id, else by name)."""
        for item in self._open:
            if call.id is not None and item.call_id == call.id:
                return item
        return next((i for i in self._open if i.tool == call.name), None)

    def clear(self) -> None:
        """Forget open cards (history reloaded)."""
        self._open.clear()


def build_items(entries: Iterable[LogEntry], index: ToolCardIndex | None = None) -> list[ChatItem]:
    """Rows for a run of log entries in seq order (history shown in the chat window)."""
    index = index or ToolCardIndex()
    out: list[ChatItem] = []
    for entry in entries:
        out.extend(items_for_entry(entry, index))
    return out


def items_for_entry(entry: LogEntry, index: ToolCardIndex) -> list[ChatItem]:
    """Rows one log entry adds, updating open tool cards through `index`."""
    if isinstance(entry, DamagedEvent):
        return [ChatItem(kind="notice", text=f"Damaged event #{entry.seq} ({entry.error})")]
    event = entry.event
    if isinstance(event, ClearedEvent):
        index.clear()
        return [ChatItem(kind="cleared", text="Conversation cleared", seq=entry.seq)]
    if isinstance(event, CompactionEvent):
        return [compaction_item(entry, event)]
    if isinstance(event, RejectedEvent):
        text = f"Message #{event.rejected_seq} was set aside: {event.reason}"
        return [ChatItem(kind="notice", text=text)]
    for part in event.function_responses:
        index.resolve(part)
    items = items_for_message(entry, event)
    for item in items:
        if item.kind == "tool":
            index.add(item)
    return items

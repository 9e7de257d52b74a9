"""Chat items: what one row of the conversation view shows, built from log events.

Pure Python (no Qt), so building 10,000 rows is cheap and testable on its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

from koroku_desktop.domain.events import LogEntry, StoredEvent
from koroku_desktop.domain.parts import FunctionCallPart
from koroku_desktop.render import blocks as b
from koroku_desktop.render.fold import entry_view
from koroku_desktop.render.text import attachment_text, fence
from koroku_desktop.ui.chat.remembered import remembered_chips, remembered_details
from koroku_desktop.ui.chat.source_rows import sources_item_args, sources_summary

# A row's kind comes from its block: text becomes a `user` or `model` row by speaker (code and
# attachments join that row); thought, tool (a call, closed by its result), compaction, cleared,
# notice (a damaged row) and remembered (passages surfaced for a message) map one to one; an
# attached file is an `attachment` row (a thumbnail or a file card; `tool` says whose).
# `status` (what the running turn does now) and `turn_notice` (how a turn ended: stopped,
# failed, budget, cut off) come from the live turn, not from the log (see ui/chat/turn_rows.py).
ItemKind = Literal[
    "user",
    "model",
    "thought",
    "tool",
    "compaction",
    "cleared",
    "notice",
    "remembered",
    "status",
    "turn_notice",
    "sources",
    "attachment",
]
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
    run: int = 1
    """On the first card of consecutive calls of one tool: how many there are."""
    run_state: ToolStatus = "pending"
    """On a run's first card: the run's status."""
    run_open: bool = False
    """On a run's first card: the individual cards are shown."""
    folded: bool = False
    """A later card of a closed run (not shown)."""
    created_at: float = 0.0
    turn_id: str = ""
    """The turn the row's event belongs to (empty for rows not from the log)."""
    actions: tuple[str, ...] = ()
    """Hover actions of the last turn: `regenerate` on its answer, `edit` on its message."""
    uid: int = field(default_factory=lambda: next(_uids))
    version: int = 0
    layout_hint: Any = field(default=None, repr=False)
    """The view's last size hint for this row and what it depended on (its delegate's cache)."""

    def touch(self) -> None:
        """Mark the content changed (invalidates cached layouts)."""
        self.version += 1

    @property
    def cache_key(self) -> tuple[int, int, bool]:
        """What a cached rendering of this item depends on."""
        return (self.uid, self.version, self.expanded)


class ToolCardIndex:
    """Finds the card a tool result answers: by call id, else the oldest open one."""

    def __init__(self) -> None:
        self._open: list[ChatItem] = []
        self.chips: dict[int, ChatItem] = {}
        """"Remembered" rows by the seq of the message they came with (for dismissals)."""
        self.dismissed: dict[int, set[int]] = {}
        """Dismissed passage seqs by message seq, also for rows loaded later (older pages)."""

    def add(self, item: ChatItem) -> None:
        """Remember a card that waits for its response."""
        self._open.append(item)

    def resolve(self, result: b.ToolResultBlock) -> ChatItem | None:
        """Close the matching card with the result (✓ or ✗ by `result.failed`); return it."""
        match = None
        for item in self._open:
            if result.call_id is not None and item.call_id == result.call_id:
                match = item
                break
        if match is None:
            match = next((i for i in self._open if i.tool == result.name), None)
        if match is None:
            return None
        self._open.remove(match)
        match.status = "error" if result.failed else "ok"
        match.result = dict(result.response)
        if result.call_args is not None:
            match.args = dict(result.call_args)
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


def _dismiss(marker: b.Marker, index: ToolCardIndex, resolved: list[ChatItem] | None) -> None:
    """A marker dismissing a remembered passage: the chips it was surfaced with show it."""
    passage, surfaced = marker.ref("dismissed"), marker.ref("surfaced_with")
    if passage is None or surfaced is None or passage.seq is None or surfaced.seq is None:
        return
    index.dismissed.setdefault(surfaced.seq, set()).add(passage.seq)
    chips = index.chips.get(surfaced.seq)
    if chips is not None:
        chips.args["dismissed"].add(passage.seq)
        chips.touch()
        if resolved is not None:
            resolved.append(chips)


def _add_marker(
    marker: b.Marker,
    index: ToolCardIndex,
    resolved: list[ChatItem] | None,
    add: Callable[[ItemKind, str, str], ChatItem],
) -> None:
    """The chat's row for a marker, by its style (none when it has no chat line: a replaced
    turn's rows are left out by MessageModel.supersede, memory files are read in the viewer)."""
    _dismiss(marker, index, resolved)
    if marker.fresh_start:
        index.clear()
    if marker.chat is None:
        return
    match marker.style:
        case "summary":
            add("compaction", marker.detail, marker.chat)
        case "divider":
            add("cleared", marker.chat, "")
        case "note" | "record" | "aside":
            add("notice", marker.chat, "")
        case _:
            assert_never(marker.style)


def items_for_entry(
    entry: LogEntry, index: ToolCardIndex, resolved: list[ChatItem] | None = None
) -> list[ChatItem]:
    """Rows one log entry adds. Tool results add none: they close open cards through
    `index` (the closed cards are appended to `resolved` when given)."""
    view = entry_view(entry)
    seq, at = view.seq, view.created_at
    items: list[ChatItem] = []
    role_kind: ItemKind = "model" if view.speaker == "model" else "user"

    def add(kind: ItemKind, text: str = "", tool: str = "") -> ChatItem:
        item = ChatItem(kind=kind, text=text, tool=tool, seq=seq, created_at=at)
        items.append(item)
        return item

    def add_text(kind: ItemKind, text: str) -> None:
        if items and items[-1].kind == kind and kind in ("model", "thought", "user"):
            items[-1].text += text
        else:
            add(kind, text)

    for block in view.blocks:
        match block:
            case b.TextBlock(text=text):
                add_text(role_kind, text)
            case b.ThoughtBlock(text=text):
                add_text("thought", text)
            case b.CodeBlock(text=text, output=output, language=language):
                add_text(role_kind, f"\n\n{fence(text, '' if output else language)}\n\n")
            case b.AttachmentBlock(sha256=str() as sha):
                card = add("attachment", attachment_text(block), tool=role_kind)
                card.args = {
                    "sha256": sha,
                    "mime_type": block.mime_type or "",
                    "name": block.name,
                    "size": block.size,
                    "server": block.server or "",
                }
            case b.AttachmentBlock():
                add_text(role_kind, f"\n\n*[{attachment_text(block)}]*\n\n")
            case b.UnknownBlock():
                pass  # kept in the log and sent back; nothing a person can read
            case b.RememberedBlock(passages=passages):
                chips = add("remembered", remembered_chips(passages))
                chips.args = {
                    "remembered": remembered_details(passages),
                    "passages": passages,
                    "dismissed": set(index.dismissed.get(seq, ())),
                }
                index.chips[seq] = chips
            case b.ToolCallBlock(name=name, args=args, call_id=call_id):
                card = add("tool", tool=name)
                card.args, card.call_id = dict(args), call_id
                index.add(card)
            case b.ToolResultBlock():
                closed = index.resolve(block)
                if closed is not None and resolved is not None:
                    resolved.append(closed)
            case b.NoticeBlock(text=text):
                add("notice", f"⚠ {text}")
            case b.SourcesBlock():
                add("sources", sources_summary(block)).args = sources_item_args(block)
            case b.Marker():
                _add_marker(block, index, resolved, add)
            case _:
                assert_never(block)
    turn_id = entry.turn_id if isinstance(entry, StoredEvent) else ""
    for item in items:
        item.text = item.text.strip() if item.kind != "tool" else item.text
        item.turn_id = turn_id
    return [i for i in items if i.kind == "tool" or i.text]

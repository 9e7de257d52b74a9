"""Terminal rendering and the `[y/N]` approver for `koroku chat` / `koroku ask`."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TextIO, assert_never

from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.domain.events import CompactionEvent, LogEntry, MessageEvent
from koroku_desktop.render import blocks as b
from koroku_desktop.render.citations import sources_block
from koroku_desktop.render.fold import entry_view, event_marker, message_blocks, speaker
from koroku_desktop.render.text import (
    attachment_text,
    mark,
    marker_text,
    notice_text,
    short_args,
    source_lines,
    when,
)


def block_line(block: b.Block, who: b.Speaker) -> str:
    """One block as a terminal line ('' for blocks the terminal does not show)."""
    match block:
        case b.TextBlock(text=text):
            return f"\nyou> {text}" if who == "user" else f"koroku> {text}"
        case b.ToolCallBlock(name=name, args=args):
            return f"  → {name}({short_args(args)})"
        case b.ToolResultBlock(name=name, failed=failed):
            return f"  {mark(failed)} {name}"
        case b.CompactionBlock(summary=summary):
            return f"── {marker_text(block)} ──\n{summary}"
        case (
            b.ClearedBlock()
            | b.RejectedBlock()
            | b.DamagedBlock()
            | b.SupersededBlock()
            | b.MemoryEditBlock()
        ):
            return f"── {marker_text(block)} ──"
        case b.DismissedBlock():
            return f"  ({marker_text(block)})"
        case b.NoticeBlock():
            return f"  {notice_text(block)}"
        case b.RememberedBlock(passages=passages):
            return "\n".join(f"  (remembered #{p.seq}: {p.text[:100]})" for p in passages)
        case b.SourcesBlock():
            return "  Sources:\n" + "\n".join(f"    {line}" for line in source_lines(block))
        case b.AttachmentBlock(sha256=str()):
            return f"  {attachment_text(block)}"
        case b.ThoughtBlock() | b.CodeBlock() | b.AttachmentBlock() | b.UnknownBlock():
            return ""
        case _:
            assert_never(block)


def _lines(who: b.Speaker, blocks: tuple[b.Block, ...]) -> str:
    return "\n".join(line for line in (block_line(x, who) for x in blocks) if line)


def render_message(event: MessageEvent, out: TextIO) -> None:
    """Print one stored message the way `koroku chat` shows history: what the person wrote
    (not the time note the model is sent), the answer with its citations and sources."""
    text = _lines(speaker(event), message_blocks(event))
    if text:
        out.write(text + "\n")


def render_summary(summary: CompactionEvent, out: TextIO) -> None:
    """Print a compaction the history replay starts from as a marker, then its summary."""
    marker = event_marker(summary)
    if marker is not None:
        out.write(block_line(marker, "marker") + "\n")


def sources_text(event: MessageEvent) -> str:
    """The sources a reply was grounded on, as terminal lines ('' when it was not)."""
    block = sources_block(event.grounding) if event.grounding is not None else None
    return "" if block is None else block_line(block, "model")


def render_entry(entry: LogEntry, out: TextIO) -> None:
    """Print one log entry for `koroku history`: its seq and time, then its lines."""
    view = entry_view(entry)
    text = _lines(view.speaker, view.blocks)
    if text:
        lead = "\n" if view.marker is not None else ""
        out.write(f"{lead}#{view.seq} {when(view.created_at)} {text}\n")


class TerminalApprover:
    """Asks `[y/N]` on the terminal, showing the tool and its full arguments.

    No answer, EOF, or no terminal at all means no; `auto_yes` approves everything.
    """

    def __init__(self, auto_yes: bool = False, out: TextIO | None = None) -> None:
        self.auto_yes = auto_yes
        self.out = out or sys.stderr
        self._lock = asyncio.Lock()

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask; deny unless the person types y or yes."""
        if self.auto_yes:
            return ApprovalDecision(allowed=True)
        async with self._lock:
            args = json.dumps(request.args, indent=2, ensure_ascii=False)
            where = f" ({request.source})" if request.source else ""
            self.out.write(f"\nKoroku wants to run {request.tool}{where} with:\n{args}\n")
            self.out.flush()
            answer = await asyncio.to_thread(self._ask, "Allow? [y/N] ")
        allowed = answer.strip().lower() in ("y", "yes")
        if not allowed:
            self.out.write("  denied\n")
        return ApprovalDecision(allowed=allowed)

    def _ask(self, prompt: str) -> str:
        if sys.stdin is not None and sys.stdin.isatty():
            self.out.write(prompt)
            self.out.flush()
            try:
                return sys.stdin.readline()
            except (OSError, ValueError):
                return ""
        try:
            with open("/dev/tty", "r+", encoding="utf-8") as tty:
                tty.write(prompt)
                tty.flush()
                return tty.readline()
        except OSError:
            self.out.write(f"{prompt}(no terminal to ask on: denied)\n")
            return ""

"""Terminal rendering and the `[y/N]` approver for `koroku chat` / `koroku ask`."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TextIO, assert_never

from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.cli.keyboard import read_terminal_line
from koroku_desktop.domain.events import CompactionEvent, LogEntry, MessageEvent
from koroku_desktop.render import blocks as b
from koroku_desktop.render.citations import sources_block
from koroku_desktop.render.diff import file_diff, resolve
from koroku_desktop.render.fold import entry_view, message_blocks, speaker
from koroku_desktop.render.markers import event_marker
from koroku_desktop.render.text import (
    attachment_text,
    mark,
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
        case b.Marker(style="summary", title=title, detail=detail):
            return f"── {title} ──\n{detail}"
        case b.Marker(style="aside", title=title):
            return f"  ({title})"
        case b.Marker(title=title):
            return f"── {title} ──"
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


NOBODY_TO_ASK = (
    "not approved: there was no terminal to ask on, so nobody could approve it; to allow it "
    "run with --yes, or answer `a` (always allow) once in `koroku chat` or the app"
)


def approval_text(request: ApprovalRequest, workspace: Path) -> str:
    """What the terminal shows before `Allow?`: the tool, the absolute path of a file it
    touches, and for file writes and edits the diff rather than the raw arguments."""
    where = f" ({request.source})" if request.source else ""
    path = request.args.get("path")
    target = f" on {resolve(path, workspace)}" if isinstance(path, str) else ""
    diff = file_diff(request.tool, request.args, workspace)
    if diff is None:
        shown = json.dumps(request.args, indent=2, ensure_ascii=False)
    else:
        rest = {k: v for k, v in request.args.items() if k not in DIFFED_ARGS}
        extra = f"\n{json.dumps(rest, ensure_ascii=False)}" if rest else ""
        shown = diff.rstrip("\n") + extra
    return f"\nKoroku wants to run {request.tool}{where}{target}:\n{shown}\n"


DIFFED_ARGS = ("path", "content", "old_str", "new_str", "replace_all")


class TerminalApprover:
    """Asks `[y/N/a]` on the terminal, showing the tool, the absolute path and the diff.

    No answer or EOF means no; with no terminal at all nobody was asked, and the model is told
    so (with how to allow it); `auto_yes` approves everything; `a` allows the tool always.
    """

    def __init__(
        self, auto_yes: bool = False, out: TextIO | None = None, workspace: Path | None = None
    ) -> None:
        self.auto_yes = auto_yes
        self.out = out or sys.stderr
        self.workspace = workspace or Path.cwd()
        self._lock = asyncio.Lock()

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask; deny unless the person types y or yes (a or always: allow from now on)."""
        if self.auto_yes:
            return ApprovalDecision(allowed=True)
        async with self._lock:
            shown = await asyncio.to_thread(approval_text, request, self.workspace)
            self.out.write(shown)
            self.out.flush()
            # Read on the loop: Ctrl-C (a cancel) leaves nothing reading the terminal.
            answer = await read_terminal_line("Allow? [y/N, a = always] ", self.out)
        if answer is None:
            self.out.write(f"  {NOBODY_TO_ASK}\n")
            return ApprovalDecision(allowed=False, reason=NOBODY_TO_ASK)
        word = answer.strip().lower()
        if word in ("a", "always"):
            return ApprovalDecision(allowed=True, scope="always")
        allowed = word in ("y", "yes")
        if not allowed:
            self.out.write("  denied\n")
        return ApprovalDecision(allowed=allowed)


EXIT_PIPE = 141
"""The shell's code for a writer whose reader went away (128 + SIGPIPE), e.g. `| head`."""


def stdout_to_devnull() -> None:
    """After a `BrokenPipeError`: point stdout at /dev/null, so nothing written later (nor
    Python's flush at exit) fails again; the command then ends quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a file descriptor (tests, embedding)
        pass


def compaction_progress(done: int, total: int) -> None:
    """Progress of a compaction that takes several requests, on stderr."""
    if total > 1:
        print(f"koroku: compacting a long history: part {done} of {total}", file=sys.stderr)

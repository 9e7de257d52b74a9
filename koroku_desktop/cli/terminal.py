"""Terminal rendering and the `[y/N]` approver for `koroku chat` / `koroku ask`."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, TextIO

from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import (
    FunctionCallPart,
    FunctionResponsePart,
    TextPart,
    visible_text,
)

OK_MARK = "✓"
FAIL_MARK = "✗"


def short_args(args: dict[str, Any], limit: int = 80) -> str:
    """`key=value, ...` on one line, cut to `limit` characters."""
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_message(event: MessageEvent, out: TextIO) -> None:
    """Print one stored message the way `koroku chat` shows history."""
    if event.role == "user" and event.is_user_turn:
        out.write(f"\nyou> {visible_text(event.parts)}\n")
        return
    for part in event.parts:
        if isinstance(part, TextPart) and not part.thought and part.text:
            out.write(f"koroku> {part.text}\n")
        elif isinstance(part, FunctionCallPart):
            out.write(f"  → {part.name}({short_args(part.args)})\n")
        elif isinstance(part, FunctionResponsePart):
            mark = FAIL_MARK if part.failed else OK_MARK
            out.write(f"  {mark} {part.name}\n")


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

"""Answers in `koroku chat`: streamed as plain text, then, on a terminal, drawn again as
Markdown with rich (bold, code, lists, tables) in place of the raw text just streamed.

Streaming first keeps the answer appearing as it is written; the redraw replaces only the
answer's last stretch of text (what was streamed since the last tool call), so nothing else
on screen moves. Piped, nothing is redrawn: scripts see exactly the streamed text, and rich
is never imported.
"""

from __future__ import annotations

import re
import shutil
from typing import TextIO

LEAD = "koroku> "
_MARKDOWN = re.compile(r"(\*\*|__|`|^#{1,6} |^\s*[-*+] |^\s*\d+\. |^\|.*\||\[[^\]]+\]\()", re.M)


def looks_like_markdown(text: str) -> bool:
    """True when rendering would change what the reader sees (plain prose is left alone)."""
    return _MARKDOWN.search(text) is not None


def rows_taken(text: str, width: int) -> int:
    """How many terminal rows `text` took when written at `width` columns (wrapped)."""
    from rich.cells import cell_len  # rich only once an answer is redrawn on a terminal

    return sum(max(1, -(-cell_len(line) // width)) for line in text.split("\n"))


class AnswerStream:
    """Writes an answer's pieces as they stream; `finish` ends the line, redrawing the last
    stretch as Markdown when `rich_terminal` (stdout is a terminal)."""

    def __init__(self, out: TextIO, rich_terminal: bool) -> None:
        self.out = out
        self.rich_terminal = rich_terminal
        self.open = False
        self.stretch = ""  # streamed since the line opened or since other output came between

    def write(self, piece: str) -> None:
        """One streamed piece (the first opens the `koroku> ` line)."""
        if not self.open:
            self.out.write(LEAD)
            self.open = True
            self.stretch = LEAD
        self.stretch += piece
        self.out.write(piece)
        self.out.flush()

    def interrupted(self) -> None:
        """Other output (a tool call) was written: what came before is not redrawn."""
        self.stretch = ""

    def finish(self) -> None:
        """End the answer's line; on a terminal, redraw its last stretch as Markdown."""
        if not self.open:
            return
        self.open = False
        text, self.stretch = self.stretch, ""
        if not (self.rich_terminal and text.startswith(LEAD) and looks_like_markdown(text)):
            self.out.write("\n")
            self.out.flush()
            return
        from rich.console import Console
        from rich.markdown import Markdown

        width = shutil.get_terminal_size().columns
        up = rows_taken(text, width) - 1
        self.out.write("\r" + (f"\x1b[{up}A" if up else "") + "\x1b[J" + LEAD.rstrip() + "\n")
        console = Console(file=self.out, width=width, force_terminal=True, soft_wrap=False)
        console.print(Markdown(text.removeprefix(LEAD)))
        self.out.flush()

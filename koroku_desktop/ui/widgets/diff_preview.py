"""The diff an approval card shows: the unified diff (render/diff.py) coloured as HTML."""

from __future__ import annotations

import html

from koroku_desktop.render.diff import MAX_BYTES, MAX_LINES, file_diff, resolve

__all__ = ["MAX_BYTES", "MAX_LINES", "diff_html", "file_diff", "resolve"]


def diff_html(diff: str, add: str, remove: str, hunk: str) -> str:
    """The diff as HTML with coloured + / - / @@ lines (monospace, pre-wrapped)."""
    out = []
    for line in diff.splitlines():
        color = ""
        if line.startswith("+") and not line.startswith("+++"):
            color = add
        elif line.startswith("-") and not line.startswith("---"):
            color = remove
        elif line.startswith("@@"):
            color = hunk
        text = html.escape(line) or "&nbsp;"
        out.append(f'<span style="color:{color}">{text}</span>' if color else text)
    return "<pre style='margin:0'>" + "<br>".join(out) + "</pre>"

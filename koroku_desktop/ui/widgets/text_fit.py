"""Heights that fit a plain-text editor's wrapped text exactly (style sheet padding included)."""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit


def fitting_height(edit: QPlainTextEdit, max_lines: int) -> tuple[int, bool]:
    """The editor's height that shows its wrapped text whole, up to `max_lines` lines, and
    whether the text needs more (then it should scroll). Counts the laid-out blocks, the
    document's margins, and the frame and padding around the viewport (the style sheet's)."""
    doc = edit.document()
    text = 0.0
    block = doc.begin()
    while block.isValid():
        text += edit.blockBoundingRect(block).height()
        block = block.next()
    line = max(edit.fontMetrics().lineSpacing(), edit.blockBoundingRect(doc.firstBlock()).height())
    text = max(text, line)
    cap = line * max_lines
    chrome = edit.height() - edit.viewport().height() if edit.height() > 0 else 0
    chrome = max(chrome, edit.frameWidth() * 2)
    shown = min(text, cap)
    return int(shown + doc.documentMargin() * 2 + chrome + 0.999), text > cap + 0.5

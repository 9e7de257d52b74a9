"""ShortcutSheet: every keyboard shortcut of the chat window, in one list (Ctrl+/ or F1, the
header's keyboard button, the tray menu). The README's shortcut table is this list; a test
keeps the two equal."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QGridLayout, QLabel, QVBoxLayout, QWidget

SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("Enter", "Send the message"),
    ("Shift+Enter", "Start a new line"),
    ("Up", "Recall your last message (in an empty message box)"),
    ("Esc", "Stop the running turn; cancel an edit"),
    ("Ctrl+Enter", "Allow a waiting tool call once"),
    ("Esc (an approval waits)", "Deny the waiting tool call"),
    ("Ctrl+Shift+R", "Regenerate the last answer"),
    ("Ctrl+Shift+E", "Edit your last message"),
    ("Ctrl+F", "Find in the conversation"),
    ("Enter, Shift+Enter (in Find)", "Next, previous match"),
    ("Ctrl+L", "Put the cursor in the message box"),
    ("Ctrl+N", "Start a new conversation"),
    ("Ctrl+B", "Show or hide the conversations (a drop-down in a narrow window)"),
    ("Ctrl+V", "Paste text, an image or files"),
    ("Ctrl+/ or F1", "Show these shortcuts"),
)
"""(keys, what they do), in the order the sheet and the README list them."""


def readme_table() -> str:
    """The README's Markdown table of SHORTCUTS."""
    lines = ["| Keys | What they do |", "| --- | --- |"]
    lines += [f"| {keys} | {what} |" for keys, what in SHORTCUTS]
    return "\n".join(lines)


class ShortcutSheet(QDialog):
    """A small window listing SHORTCUTS; Esc or Close closes it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ShortcutSheet")
        self.setWindowTitle("Keyboard shortcuts")
        col = QVBoxLayout(self)
        col.setContentsMargins(20, 16, 20, 14)
        grid = QGridLayout()
        grid.setHorizontalSpacing(18)
        grid.setVerticalSpacing(6)
        for row, (keys, what) in enumerate(SHORTCUTS):
            key_label = QLabel(f"<b>{html.escape(keys)}</b>")
            key_label.setTextFormat(Qt.TextFormat.RichText)
            grid.addWidget(key_label, row, 0, Qt.AlignmentFlag.AlignTop)
            what_label = QLabel(what)
            what_label.setWordWrap(True)
            grid.addWidget(what_label, row, 1)
        grid.setColumnStretch(1, 1)
        col.addLayout(grid)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        col.addWidget(buttons)
        self.setMinimumWidth(min(520, max(340, (parent.width() - 40) if parent else 520)))

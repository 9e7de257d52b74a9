"""InlineNotice: the sentences above the chat window's message box about what just did not
happen and why (a key not sent, a file not attached, an MCP prompt that failed)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

MAX_LINES = 4
"""Several hints stack, the newest last; older ones beyond this drop off."""


class InlineNotice(QLabel):
    """A word-wrapped line, hidden until a hint comes; a repeated hint is not added twice."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("InlineNotice")
        self.setWordWrap(True)
        self.setVisible(False)

    def add(self, text: str) -> None:
        """Show `text` under the hints already shown (until `setVisible(False)`)."""
        lines = self.text().splitlines() if self.isVisibleTo(self.window()) else []
        if text not in lines:
            lines.append(text)
        self.setText("\n".join(lines[-MAX_LINES:]))
        self.setVisible(True)

"""An MCP call's progress in the chat window: on its running card and in the status line.

The manager reports every `notifications/progress` and task status of a running call (on
the event loop, which is Qt's under qasync); the running card shows the latest line in place
of its arguments, and the turn's status row says `Running the tool x: 40% — message…`.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from koroku_desktop.app.runtime import McpManager, McpProgress
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.chat.turn_rows import status_text


class McpProgressFollower(QObject):
    """Shows the progress reports of `manager`'s calls on `model`'s cards and status row."""

    def __init__(self, manager: McpManager, model: MessageModel, parent: QObject | None = None):
        super().__init__(parent)
        self.model = model
        self._manager = manager
        manager.on_progress.append(self.show)
        self.destroyed.connect(self._detach)

    def show(self, update: McpProgress) -> None:
        """Put one report on the call's running card and in the status row."""
        detail = update.detail()
        if self.model.tool_progress(update.function, detail):
            said = detail.rstrip(".…")  # the status line ends with its own ellipsis
            self.model.set_status(status_text("tool", f"{update.function}: {said}"))

    def _detach(self, *_args: object) -> None:
        if self.show in self._manager.on_progress:
            self._manager.on_progress.remove(self.show)

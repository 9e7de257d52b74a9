"""RowActions: what an action clicked inside a conversation row does — retry a failed turn,
regenerate or edit the last one, switch between its versions (‹ 1/2 ›), open an attached
file in the desktop's application for it, or open a remembered passage's card (Show in
history, Dismiss).

The conversation view only reports the action's name (`ConversationView.action_requested`);
this turns it into the window's and the bridge's intents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QUrl
from PySide6.QtGui import QCursor

from koroku_desktop.ui.chat.attachment_rows import open_copy
from koroku_desktop.ui.chat.remembered_card import RememberedCard, remembered_card
from koroku_desktop.ui.chat.remembered_painter import parse_chip_action

if TYPE_CHECKING:
    from koroku_desktop.ui.chat.window import ChatWindow


class RowActions:
    """Runs the actions of the chat window's rows."""

    def __init__(self, window: ChatWindow) -> None:
        self._window = window

    def run(self, action: str) -> None:
        """Do what `action` (as the view reports it) asks."""
        if action == "retry":
            self._window.retry()
        elif action == "regenerate":
            self._window.last_turn.regenerate()
        elif action == "edit":
            self._window.last_turn.start_edit()
        elif action.startswith("version:"):  # ‹ / › under a replaced turn's answer
            newest, _, step = action.removeprefix("version:").rpartition(":")
            self._window.model.show_version(newest, int(step))
        elif action.startswith("file:"):
            self.open_attachment(action.removeprefix("file:"))
        elif (chip := parse_chip_action(action)) is not None:
            self.open_remembered(*chip)

    def open_attachment(self, sha256: str) -> None:
        """Open a temporary copy of an attached file in the desktop's application for it."""
        window = self._window
        rows = [i for i in window.model.items() if i.kind == "attachment"]
        row = next((i for i in rows if i.args.get("sha256") == sha256), None)
        try:
            path = open_copy(window.bridge.attachments, row.args if row else {"sha256": sha256})
        except (LookupError, OSError, ValueError) as exc:
            window.show_hint(f"That file cannot be opened: {exc}")
            return
        window.open_url(QUrl.fromLocalFile(str(path)))

    def open_remembered(self, surfaced_seq: int, passage_seq: int) -> RememberedCard | None:
        """Open a remembered passage's card at the mouse (Show in history, Dismiss)."""
        window = self._window
        card = remembered_card(window.model.items(), surfaced_seq, passage_seq, window)
        if card is not None:
            card.show_in_history.connect(window.history_seq_requested)
            card.dismiss_requested.connect(window.bridge.dismiss_remembered)
            card.move(QCursor.pos())
            card.show()
        return card

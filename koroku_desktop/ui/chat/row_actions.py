"""RowActions: what an action clicked inside a conversation row does — retry a failed turn,
regenerate or edit the last one, switch between its versions (‹ 1/2 ›), open an attached
file in the desktop's application for it, or open a remembered passage's card (Show in
history, Dismiss).

The conversation view only reports the action's name (`ConversationView.action_requested`);
this turns it into the window's and the bridge's intents.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QUrl, SignalInstance
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QWidget

from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.attachment_rows import open_copy
from koroku_desktop.ui.chat.last_turn import LastTurnActions
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.chat.remembered_card import RememberedCard, remembered_card
from koroku_desktop.ui.chat.remembered_painter import parse_chip_action


class RowWindow(Protocol):
    """What the rows' actions need of the chat window."""

    @property
    def model(self) -> MessageModel:
        """The conversation's rows."""
        ...

    @property
    def bridge(self) -> AgentBridge:
        """The agent's side (attachments, dismissing a remembered passage)."""
        ...

    @property
    def last_turn(self) -> LastTurnActions:
        """Regenerate and edit."""
        ...

    @property
    def history_seq_requested(self) -> SignalInstance:
        """Open the history at an event (a remembered passage's source)."""
        ...

    def retry(self) -> None:
        """Run the failed turn again."""
        ...

    def show_hint(self, text: str) -> None:
        """Say something briefly under the conversation."""
        ...

    def open_url(self, url: QUrl) -> None:
        """Open `url` in the desktop's application for it."""
        ...


class RowActions:
    """Runs the actions of the chat window's rows."""

    def __init__(self, window: RowWindow, parent: QWidget) -> None:
        """`parent` (the window itself) holds a remembered passage's card."""
        self._window = window
        self._parent = parent

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
        card = remembered_card(window.model.items(), surfaced_seq, passage_seq, self._parent)
        if card is not None:
            card.show_in_history.connect(window.history_seq_requested)
            card.dismiss_requested.connect(window.bridge.dismiss_remembered)
            card.move(QCursor.pos())
            card.show()
        return card

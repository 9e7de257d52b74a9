"""Regenerate and edit-and-resend in the chat window: the last turn's actions and the
editing state.

The last turn's answer offers `↻ Regenerate` and its message `✎ Edit` on hover (also
Ctrl+Shift+R and Ctrl+Shift+E). Editing puts the message back in the message box under a
clear "editing" banner: Enter sends it in place of the original, Esc or Cancel restores what
was being typed before. The turn itself is replaced by the agent, under the turn lease
(agent/supersede.py); nothing here touches the log.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from koroku_desktop.agent.supersede import LastTurn, last_turn
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.composer import Composer
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.widgets.chat_input import ChatInput
from koroku_desktop.ui.widgets.controls import push_button, single_shot

EDITING_TEXT = "✎ Editing your last message — Enter sends it in place of the original · Esc cancels"


class EditingWindow(Protocol):
    """What the editing state needs of the chat window (its rows, its message box, hints)."""

    @property
    def model(self) -> MessageModel:
        """The conversation's rows (the last turn is marked on them)."""
        ...

    @property
    def composer(self) -> Composer:
        """The message box with its buttons."""
        ...

    @property
    def input(self) -> ChatInput:
        """The message box's text field."""
        ...

    @property
    def send_button(self) -> QPushButton:
        """Send (it reads "Send edit" while editing)."""
        ...

    def refocus_input(self) -> None:
        """Put the focus back in the message box."""
        ...

    def show_hint(self, text: str) -> None:
        """Say something briefly under the conversation."""
        ...


class LastTurnActions(QObject):
    """Which turn may be replaced now, the hover actions on it, and the editing state."""

    def __init__(self, window: EditingWindow, bridge: AgentBridge, parent: QWidget) -> None:
        """`parent` (the window itself) owns the shortcuts Ctrl+Shift+R and Ctrl+Shift+E."""
        super().__init__(parent)
        self._window = window
        self._bridge = bridge
        self.editing: LastTurn | None = None
        """The turn whose message is being edited (None: not editing)."""
        self._draft = ""
        self._sent_edit = ""
        """An edited message on its way: given back to the box if its turn cannot be replaced."""
        self.banner = QFrame()
        self.banner.setObjectName("EditingBanner")
        row = QHBoxLayout(self.banner)
        row.setContentsMargins(10, 4, 6, 4)
        self.banner_label = QLabel(EDITING_TEXT)
        self.banner_label.setWordWrap(True)
        row.addWidget(self.banner_label, 1)
        self.cancel_button = push_button("Cancel", self.cancel_edit, tip="Stop editing (Esc)")
        row.addWidget(self.cancel_button)
        self.banner.setVisible(False)
        self._refresh = single_shot(self, 0, self.refresh)
        # The meter is shown once the live context is read (after a switch): offered then.
        for signal in (
            bridge.busy_changed,
            bridge.turn_finished,
            bridge.event_appended,
            bridge.context_meter,
        ):
            signal.connect(self.schedule_refresh)
        window.model.modelReset.connect(self.schedule_refresh)
        bridge.supersede_failed.connect(self._failed)
        bridge.turn_started.connect(self._edit_went_through)
        window.input.escape_pressed.connect(self.cancel_edit)
        for keys, slot in (("Ctrl+Shift+R", self.regenerate), ("Ctrl+Shift+E", self.start_edit)):
            shortcut = QShortcut(QKeySequence(keys), parent)
            shortcut.activated.connect(slot)

    def schedule_refresh(self, *_args: object) -> None:
        """Recompute the last turn once the current burst of updates is over."""
        self._refresh.start()

    def replaceable(self) -> LastTurn | None:
        """The turn a regenerate or an edit may replace now; None while a turn runs here,
        before the live context is loaded, or when it was compacted away."""
        bridge = self._bridge
        agent = bridge.agent
        if bridge.busy or agent.busy or not agent.loaded:
            return None
        return last_turn(agent.view)

    def refresh(self) -> None:
        """Offer the actions on the last turn's rows (none while a turn runs or while editing)."""
        if self.editing is not None:
            self._window.model.mark_last_turn(self.editing.turn_id, editing=True)
            return
        turn = self.replaceable()
        self._window.model.mark_last_turn(turn.turn_id if turn is not None else None)

    def regenerate(self) -> None:
        """A new answer to the last message, in place of the last one."""
        turn = self.replaceable()
        if turn is None or self.editing is not None:
            return
        self._window.model.mark_last_turn(None)
        self._bridge.replace_last(turn.turn_id)
        self._window.refocus_input()

    def start_edit(self) -> None:
        """Put the last message back in the message box, in the editing state."""
        turn = self.replaceable()
        if turn is None or self.editing is not None:
            return
        box = self._window.input
        self._draft = box.toPlainText()
        self.editing = turn
        box.setPlainText(turn.text)
        box.moveCursor(box.textCursor().MoveOperation.End)
        self._show(True)
        self._window.model.mark_last_turn(turn.turn_id, editing=True)
        self._window.refocus_input()

    def cancel_edit(self) -> None:
        """Leave the editing state; what was being typed before comes back."""
        if self.editing is None:
            return
        self.editing = None
        self._window.input.setPlainText(self._draft)
        self._window.input.moveCursor(self._window.input.textCursor().MoveOperation.End)
        self._draft = ""
        self._show(False)
        self.schedule_refresh()
        self._window.refocus_input()

    def send_edit(self, text: str) -> None:
        """Send `text` in place of the edited message (called by the window's submit)."""
        turn = self.editing
        if turn is None:
            return
        self.editing = None
        self._show(False)
        self._window.input.setPlainText(self._draft)
        self._draft = ""
        self._window.model.mark_last_turn(None)
        self._sent_edit = text
        self._bridge.replace_last(turn.turn_id, text)

    def _show(self, editing: bool) -> None:
        self.banner.setVisible(editing)
        composer = self._window.composer
        composer.setProperty("editing", editing)
        composer.style().unpolish(composer)
        composer.style().polish(composer)
        self._window.send_button.setText("Send edit" if editing else "Send")

    def _edit_went_through(self, _text: object) -> None:
        self._sent_edit = ""

    def _failed(self, reason: str) -> None:
        box = self._window.input
        if self._sent_edit and not box.toPlainText().strip():
            box.setPlainText(self._sent_edit)  # the edited text is never lost
        self._sent_edit = ""
        self._window.show_hint(f"Could not replace the last turn: {reason}.")
        self.schedule_refresh()

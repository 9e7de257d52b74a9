"""ApprovalStack: a bridge's inline approval cards (shared by the chat window and the popup).

While a card waits, its keys (Ctrl+Enter allows once, Esc denies) work from anywhere in the
stack's window: an application event filter routes them to the card, whatever has the focus.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.ui.approvals import PendingApproval
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.widgets.approval_card import ApprovalCard


class ApprovalStack(QWidget):
    """Inline approval cards for a bridge, shown above an input (chat window and popup)."""

    def __init__(self, bridge: AgentBridge, workspace: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._workspace = workspace
        self._cards: dict[int, tuple[PendingApproval, ApprovalCard]] = {}
        self._filtering = False
        self.focus_after: QWidget | None = None
        """Where the keyboard goes once a card is answered (the message box)."""
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(8)
        self.setVisible(False)
        bridge.approval_requested.connect(self.add)
        bridge.approval_closed.connect(self.remove)
        for pending in bridge.pending_approvals:
            self.add(pending)

    def add(self, pending: PendingApproval) -> None:
        """Show a card for a waiting approval."""
        card = ApprovalCard(pending.request, self._workspace, self)
        card.answered.connect(lambda d: self._bridge.answer_approval(pending, d))
        self._cards[id(pending)] = (pending, card)
        self._layout.addWidget(card)
        self.setVisible(True)
        self._watch_keys(True)
        if self._keys_taken(card):
            return  # its keys work from there too; what is typed stays there
        if self.window().isActiveWindow() or self.isVisible():
            card.focus_default()

    def _keys_taken(self, new: ApprovalCard) -> bool:
        """The keyboard is on another card (being read, its command edited: Ctrl+Enter must
        answer that one, never a newer card not read yet; the popup's other stack's too), or
        in a text box of this window (the message box): a card arriving must not take it from
        under the user's fingers."""
        focus = QApplication.focusWidget()
        if focus is None or focus.window() is not self.window():
            return False
        holder = _card_of(focus)
        if holder is not None:
            return holder is not new
        return isinstance(focus, QLineEdit | QTextEdit | QPlainTextEdit) and not focus.isReadOnly()

    def remove(self, pending: PendingApproval) -> None:
        """Drop the card of an answered or abandoned approval."""
        entry = self._cards.pop(id(pending), None)
        if entry is not None:
            self._hand_back_focus(entry[1])
            entry[1].hide()
            entry[1].deleteLater()
        self.setVisible(bool(self._cards))
        self._watch_keys(bool(self._cards))

    def _hand_back_focus(self, card: ApprovalCard) -> None:
        """Before the answered card hides (Qt would pass its focus to the next widget in the
        tab chain, the header's first button), give the keyboard to the next card or the box."""
        focus = QApplication.focusWidget()
        if focus is not None and focus is not card and not card.isAncestorOf(focus):
            return
        rest = [c for c in self.cards() if c is not card]
        if rest:
            rest[0].focus_default()
        elif self.focus_after is not None:
            self.focus_after.setFocus(Qt.FocusReason.OtherFocusReason)

    def cards(self) -> list[ApprovalCard]:
        """The cards shown, oldest first."""
        return [card for _, card in self._cards.values()]

    def focus_first(self) -> bool:
        """Put the focus on the oldest waiting card; False when none waits."""
        cards = self.cards()
        if cards:
            cards[0].focus_default()
        return bool(cards)

    def _watch_keys(self, on: bool) -> None:
        app = QCoreApplication.instance()
        if app is None or on == self._filtering:
            return
        self._filtering = on
        if on:
            app.installEventFilter(self)
        else:
            app.removeEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Route Ctrl+Enter / Esc pressed anywhere in this window to the waiting card."""
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        if not isinstance(watched, QWidget) or not self._cards:
            return False
        if watched.window() is not self.window() or not self.isVisible():
            return False
        if not _is_approval_key(event):
            return False
        holder = _card_of(watched)
        if holder is not None and holder not in self.cards():
            return False  # another stack's card (the popup shows two): it answers its keys
        return (holder or self.cards()[0]).handle_key(event)


def _card_of(widget: QWidget) -> ApprovalCard | None:
    """The approval card `widget` is or is in, if any."""
    at: QWidget | None = widget
    while at is not None and not at.isWindow():
        if isinstance(at, ApprovalCard):
            return at
        at = at.parentWidget()
    return None


def _is_approval_key(event: QKeyEvent) -> bool:
    enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
    ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
    return (enter and ctrl) or event.key() == Qt.Key.Key_Escape

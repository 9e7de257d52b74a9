"""ApprovalStack: a bridge's inline approval cards (shared by the chat window and the popup)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QVBoxLayout, QWidget

from koroku_desktop.ui.bridge import AgentBridge, PendingApproval
from koroku_desktop.ui.widgets.approval_card import ApprovalCard


class ApprovalStack(QWidget):
    """Inline approval cards for a bridge, shown above an input (chat window and popup)."""

    def __init__(self, bridge: AgentBridge, workspace: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._workspace = workspace
        self._cards: dict[int, tuple[PendingApproval, ApprovalCard]] = {}
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
        if self.window().isActiveWindow() or self.isVisible():
            card.focus_default()

    def remove(self, pending: PendingApproval) -> None:
        """Drop the card of an answered or abandoned approval."""
        entry = self._cards.pop(id(pending), None)
        if entry is not None:
            entry[1].hide()
            entry[1].deleteLater()
        self.setVisible(bool(self._cards))

    def cards(self) -> list[ApprovalCard]:
        """The cards shown, oldest first."""
        return [card for _, card in self._cards.values()]

"""MCP elicitation in the chat window: each request is a card above the approvals.

`WindowElicitor` is the manager's elicitor (set before the servers start, so they know the
window can ask): it shows an ElicitationCard and waits for its answer; the manager declines
a request left unanswered too long, and the card goes away either way.
"""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QBoxLayout, QWidget

from koroku_desktop.app.runtime import McpElicitAnswer, McpElicitation
from koroku_desktop.ui.widgets.elicitation_card import ElicitationCard


class WindowElicitor:
    """Asks in the anchor's parent layout, just before `anchor` (the approval stack)."""

    def __init__(self, anchor: QWidget) -> None:
        self.anchor = anchor
        self.cards: list[ElicitationCard] = []

    async def __call__(self, request: McpElicitation) -> McpElicitAnswer:
        parent = self.anchor.parentWidget()
        layout = parent.layout() if parent is not None else None
        if not isinstance(layout, QBoxLayout):
            return McpElicitAnswer("decline")
        card = ElicitationCard(request, parent)
        done: asyncio.Future[McpElicitAnswer] = asyncio.get_running_loop().create_future()

        def settle(answer: McpElicitAnswer) -> None:
            if not done.done():
                done.set_result(answer)

        card.answered.connect(settle)
        layout.insertWidget(layout.indexOf(self.anchor), card)
        self.cards.append(card)
        card.show()
        card.focus_default()
        try:
            return await done
        finally:
            self.cards.remove(card)
            card.hide()
            card.deleteLater()

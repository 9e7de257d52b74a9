"""ConversationNav: how the chat window moves between conversations — the sidebar beside
the conversation (shown or hidden with the header's sidebar button or Ctrl+B), the same
button as a drop-down of conversations in a narrow window, Ctrl+N for a new one, and the
window title naming the current conversation. It reports choices through its signals."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, QPoint, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from koroku_desktop.domain.conversations import Conversation
from koroku_desktop.ui.chat.header import HeaderTitle
from koroku_desktop.ui.chat.origin_badge import origin_badge, origin_tooltip
from koroku_desktop.ui.chat.sidebar import ConversationSidebar, ordered, shown_title

NARROW_SIDEBAR = 700
"""Below this window width the sidebar gives way to a drop-down."""


class ConversationNav(QObject):
    """The sidebar, its toggle and drop-down, and the conversation shortcuts of a window."""

    chosen = Signal(str)
    new_requested = Signal()

    def __init__(
        self, window: QWidget, toggle: QToolButton, title: HeaderTitle | None = None
    ) -> None:
        """`toggle` shows/hides the sidebar (a drop-down when narrow); `title` names the
        current conversation."""
        super().__init__(window)
        self.title = title
        self.window = window
        self.sidebar = ConversationSidebar()
        self.sidebar.chosen.connect(self.chosen)
        self.sidebar.new_requested.connect(self.new_requested)
        self.toggle = toggle
        toggle.clicked.connect(self.toggle_or_drop_down)
        self.wanted = True
        """The person wants the sidebar (it still hides in a narrow window)."""
        self.narrow = False
        self.drop_down: QMenu | None = None
        QShortcut(QKeySequence("Ctrl+N"), window).activated.connect(self.new_requested)
        QShortcut(QKeySequence("Ctrl+B"), window).activated.connect(self.toggle_or_drop_down)

    def set_width(self, width: int) -> None:
        """Follow the window's width: the sidebar in a wide one, the drop-down in a narrow."""
        self.narrow = width < NARROW_SIDEBAR
        self._show()

    def set_wanted(self, shown: bool) -> None:
        """Show or hide the sidebar (where the window is wide enough for it)."""
        self.wanted = shown
        self._show()

    def _show(self) -> None:
        self.sidebar.setVisible(self.wanted and not self.narrow)
        tip = "Conversations (Ctrl+B)"
        if not self.narrow:
            tip = ("Hide" if self.wanted else "Show") + " conversations (Ctrl+B)"
        self.toggle.setToolTip(tip)

    def toggle_or_drop_down(self) -> None:
        """Ctrl+B or the header button: hide/show the sidebar, or in a narrow window open
        the drop-down of conversations."""
        if self.narrow:
            self.open_drop_down()
        else:
            self.set_wanted(not self.wanted)

    def open_drop_down(self) -> QMenu:
        """The conversations as a menu under the header button (a narrow window's list)."""
        if self.drop_down is not None:  # each opening lists the conversations afresh; the
            self.drop_down.deleteLater()  # menu before it would live as long as the window
        menu = self.drop_down = QMenu(self.window)
        menu.setToolTipsVisible(True)
        menu.addAction("New conversation", self.new_requested.emit)
        menu.addSeparator()
        side = self.sidebar
        for conversation in ordered(side.conversations, side.pinned):
            badge = origin_badge(conversation)
            mark = side.activity_mark(conversation.id)
            line = shown_title(conversation, side.pinned) + (f"  · {badge}" if badge else "")
            action = menu.addAction((line + mark).replace("&", "&&"))
            action.setToolTip(origin_tooltip(conversation))
            action.setCheckable(True)
            action.setChecked(conversation.id == side.current_id)
            action.triggered.connect(lambda _c=False, cid=conversation.id: self._pick(cid))
        menu.popup(self.toggle.mapToGlobal(QPoint(0, self.toggle.height())))
        return menu

    def _pick(self, conversation_id: str) -> None:
        if conversation_id != self.sidebar.current_id:
            self.chosen.emit(conversation_id)

    def show_conversations(
        self, conversations: Sequence[Conversation], current_id: str, pinned: set[str]
    ) -> None:
        """Show the conversations; the window's title names the current one."""
        self.sidebar.show_conversations(conversations, current_id, pinned)
        current = next((c for c in conversations if c.id == current_id), None)
        self.window.setWindowTitle(f"{current.title} — Koroku" if current else "Koroku")
        if self.title is not None:
            self.title.set_full(current.title if current else "Koroku")

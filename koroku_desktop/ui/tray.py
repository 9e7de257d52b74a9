"""TrayIcon: the tray icon with its state (idle, working, approval, error) and its menu."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from koroku_desktop.domain.conversations import Conversation
from koroku_desktop.ui.chat.sidebar import PIN
from koroku_desktop.ui.widgets.icons import TrayState, tray_icon

SHORTCUT_HELP = (
    "Where the desktop offers global shortcuts through its portal (KDE Plasma, GNOME 48 or "
    "later, Hyprland), Koroku registers this shortcut itself and the desktop asks you to "
    "confirm it. Elsewhere there is no global shortcut: bind the command `koroku quick-ask` "
    "to a key in your desktop's keyboard settings (GNOME: Settings → Keyboard → Custom "
    "Shortcuts; KDE: System Settings → Shortcuts → Custom Shortcuts)."
)

TOOLTIPS: dict[TrayState, str] = {
    "idle": "Koroku",
    "working": "Koroku — working…",
    "approval": "Koroku — a tool call waits for your approval",
    "error": "Koroku — the last request failed",
    "unread": "Koroku — a scheduled task has a result you have not read",
}


class TrayIcon(QObject):
    """The system tray entry; reports menu choices as signals."""

    open_chat = Signal()
    quick_ask = Signal()
    quit_requested = Signal()
    shortcut_help = Signal()
    chat_shortcuts = Signal()
    history_requested = Signal()
    settings_requested = Signal()
    conversation_chosen = Signal(str)  # a recent conversation's id

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state: TrayState = "idle"
        self.notifications: list[tuple[str, str]] = []
        """Every notification asked for (also when the platform cannot show them)."""
        self.icon = QSystemTrayIcon(tray_icon("idle"), self)
        self.menu = QMenu()
        self._add("Open chat", self.open_chat)
        self._add("Quick ask", self.quick_ask)
        self.recent = self.menu.addMenu("Recent conversations")
        self.recent.setEnabled(False)
        self.menu.addSeparator()
        self._add("History && memory", self.history_requested)
        self._add("Settings", self.settings_requested)
        self._add("Keyboard shortcut…", self.shortcut_help)
        self._add("Chat window shortcuts", self.chat_shortcuts)
        self.menu.addSeparator()
        self._add("Quit", self.quit_requested)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.icon.messageClicked.connect(self.open_chat)
        self.set_state("idle")

    def _add(self, label: str, signal: SignalInstance) -> QAction:
        action = self.menu.addAction(label)
        action.triggered.connect(lambda: signal.emit())
        return action

    def show_recent(self, conversations: list[Conversation]) -> None:
        """List these conversations (pinned ones first, marked, then the most recent) under
        Recent conversations."""
        self.recent.clear()
        for conversation in conversations:
            title = (PIN if conversation.pinned else "") + conversation.title
            action = self.recent.addAction(title.replace("&", "&&"))
            action.triggered.connect(
                lambda _c=False, cid=conversation.id: self.conversation_chosen.emit(cid)
            )
        self.recent.setEnabled(bool(conversations))

    def actions(self) -> dict[str, QAction]:
        """The menu's actions by label (for tests)."""
        return {a.text(): a for a in self.menu.actions() if a.text()}

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.open_chat.emit()

    def show(self) -> None:
        """Put the icon in the tray."""
        self.icon.show()

    def hide(self) -> None:
        """Take the icon out of the tray."""
        self.icon.hide()

    def set_state(self, state: TrayState) -> None:
        """Show idle / working / approval / error."""
        self.state = state
        self.icon.setIcon(tray_icon(state))
        self.icon.setToolTip(TOOLTIPS[state])

    def notify(self, title: str, message: str) -> None:
        """A desktop notification from the tray."""
        self.notifications.append((title, message))
        if self.icon.isVisible() and QSystemTrayIcon.supportsMessages():
            self.icon.showMessage(title, message, tray_icon("idle"), 6000)

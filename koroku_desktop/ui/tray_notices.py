"""TrayNotices: what the tray tells the person while the chat is out of sight — its icon's
state (idle, working, approval, error), a notification when an answer lands or a tool call
waits for approval and nobody is looking, the one-time "still running" hint, the shortcut
help and a failed screen capture. Kept apart from `Desktop` so the composition root only
wires; `TrayIcon` (tray.py) is the icon and its menu."""

from __future__ import annotations

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QMessageBox

from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.ui.approvals import PendingApproval
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.window import ChatWindow
from koroku_desktop.ui.quick_ask.popup import QuickAskPopup
from koroku_desktop.ui.tray import SHORTCUT_HELP, TrayIcon
from koroku_desktop.ui.widgets.icons import TrayState

HIDE_HINT_KEY = "hints/hidden_to_tray_shown"


def first_line(text: str, limit: int = 120) -> str:
    """The first non-empty line of an answer, shortened for a notification."""
    for line in text.splitlines():
        line = line.strip().lstrip("#>*- ").strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return "Koroku answered."


class TrayNotices:
    """Keeps the tray icon's state in step with the bridge and notifies through the tray
    (when there is one) about what happens while the windows are hidden."""

    def __init__(
        self,
        bridge: AgentBridge,
        window: ChatWindow,
        popup: QuickAskPopup,
        tray: TrayIcon | None,
        ui_settings: QSettings,
    ) -> None:
        self._bridge, self._window, self._popup = bridge, window, popup
        self._tray, self._ui_settings = tray, ui_settings
        self.unread: set[str] = set()
        """Conversations with a task's result nobody has opened yet (the tray marks them)."""

    def wire(self) -> None:
        """Follow the bridge's turns and approvals, and the window hiding to the tray."""
        b = self._bridge
        self._window.hidden_to_tray.connect(self.hidden_hint)
        for signal in (
            b.busy_changed,
            b.approval_requested,
            b.approval_closed,
            b.error,
            b.turn_started,
            b.activity_changed,  # another conversation's turn, or its approval
        ):
            signal.connect(self.update)
        b.turn_finished.connect(self.turn_finished)
        b.background_turn_finished.connect(self.turn_finished)
        b.approval_requested.connect(self.approval_waiting)
        if self._tray is not None:
            self._tray.shortcut_help.connect(self.shortcut_help)

    def follow(self, bridge: AgentBridge) -> None:
        """Notify another bridge's answers and approvals too (quick ask's own, asking into
        Quick asks) when neither window is visible."""
        bridge.turn_finished.connect(self.turn_finished)
        bridge.approval_requested.connect(self.approval_waiting)

    def _nobody_looking(self) -> bool:
        return not self._window.isVisible() and not self._popup.isVisible()

    def state(self) -> TrayState:
        """What the tray icon shows now (the turns of every conversation)."""
        if self._bridge.pending_approvals or self._bridge.needs_you():
            return "approval"
        if self._bridge.busy or self._bridge.running():
            return "working"
        if self._bridge.last_error:
            return "error"
        return "unread" if self.unread else "idle"

    def mark_unread(self, conversation_id: str) -> None:
        """A task's result landed in `conversation_id`: the tray marks it until opened."""
        self.unread.add(conversation_id)
        self.update()

    def mark_read(self, conversation_id: str) -> None:
        """`conversation_id` was opened: its results are read."""
        self.unread.discard(conversation_id)
        self.update()

    def update(self, *_args: object) -> None:
        """Show the current state on the tray icon."""
        if self._tray is not None:
            self._tray.set_state(self.state())

    def turn_finished(self, result: TurnResult) -> None:
        """Notify the answer (or the failure) when neither window is visible."""
        QTimer.singleShot(0, self.update)
        if self._tray is None or not self._nobody_looking() or result.cancelled:
            return
        if result.error is not None:
            self._tray.notify("Koroku: the request failed", first_line(result.error.message))
        else:
            self._tray.notify("Koroku answered", first_line(result.text))

    def approval_waiting(self, pending: PendingApproval) -> None:
        """Notify a tool call waiting for approval when neither window is visible."""
        if self._tray is not None and self._nobody_looking():
            self._tray.notify(
                "Koroku is waiting for your approval",
                f"{pending.request.tool} wants to run. Open the chat to allow or deny it.",
            )

    def hidden_hint(self) -> None:
        """The first time the chat hides to the tray, say that Koroku still runs there."""
        if self._tray is not None and not self._ui_settings.value(HIDE_HINT_KEY, False, bool):
            self._ui_settings.setValue(HIDE_HINT_KEY, True)
            self._tray.notify(
                "Koroku is still running",
                "It lives in the tray. Use the tray menu to open it again or to quit.",
            )

    def shortcut_help(self) -> None:
        """How to bind the quick-ask shortcut (from the tray menu)."""
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "Keyboard shortcut",
            SHORTCUT_HELP,
            QMessageBox.StandardButton.Ok,
            self._window,
        )
        box.open()

    def capture_failed(self, why: str) -> None:
        """A screen capture failed: say why in the chat window and through the tray."""
        self._window.show_notice(why)
        if self._tray is not None:
            self._tray.notify("Koroku could not capture the screen", why)

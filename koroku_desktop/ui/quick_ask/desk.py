"""QuickAskDesk: the quick-ask popup as the desktop runs it — where its questions go
(`QuickAskRouter`), the screen capture it can ask about, and opening an exchange in the chat
window (switching the window to Quick asks first when the exchange went there)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, QTimer, Signal

from koroku_desktop.app.runtime import Runtime
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.window import ChatWindow
from koroku_desktop.ui.conversation_switcher import ConversationSwitcher
from koroku_desktop.ui.quick_ask.popup import QuickAskPopup
from koroku_desktop.ui.quick_ask.router import QuickAskRouter
from koroku_desktop.ui.screen_capture import capture_for_asking
from koroku_desktop.ui.tray_notices import TrayNotices

CAPTURE_DELAY_MS = 250
"""How long the compositor is given to take the hidden popup off the screen."""


class QuickAskDesk(QObject):
    """The popup, its router and its screen capture (see the module)."""

    screen_captured = Signal(bytes)
    """A screen capture (PNG) for the popup, from `koroku quick-ask --screen` or its button."""

    def __init__(
        self,
        runtime: Runtime,
        bridge: AgentBridge,
        window: ChatWindow,
        workspace: Path,
        ui_settings: QSettings,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.runtime, self.window = runtime, window
        self.popup = QuickAskPopup(bridge, workspace, ui_settings)
        self.router = QuickAskRouter(runtime, bridge, self)
        self.popup.route = self.router.bridge_for_ask
        self.popup.target.show_target(self.router.target)
        self.capture_failed: Callable[[str], None] = lambda _why: None
        """Says why a capture failed (the app's notices, once they exist)."""
        self._keep: Callable[[Coroutine[Any, Any, None]], None] = lambda coro: coro.close()

    def wire(
        self,
        conversations: ConversationSwitcher,
        keep: Callable[[Coroutine[Any, Any, None]], None],
        notices: TrayNotices,
    ) -> None:
        """Connect the popup to the conversations (the target's title, Open in chat, the
        sidebar after a quick ask into Quick asks), the tray's notices and the capture."""
        self._keep, self.capture_failed = keep, notices.capture_failed
        self.conversations = conversations
        popup, router = self.popup, self.router
        conversations.current_title.connect(popup.show_conversation)
        popup.target.chosen.connect(self._choose)
        router.target_changed.connect(popup.target.show_target)
        router.bridge_made.connect(popup.add_bridge)
        router.bridge_made.connect(notices.follow)
        router.turn_finished.connect(lambda _result: conversations.refresh())
        popup.open_in_chat.connect(self.open_chat_at)
        popup.screen_requested.connect(self._screen_from_popup)
        self.screen_captured.connect(lambda png: popup.attach_bytes(png, "screen.png"))

    def _choose(self, target: str) -> None:
        problem = self.router.choose(target)
        if problem is not None:
            self.popup.show_hint(problem)

    def show(self) -> None:
        """Open the popup near the cursor."""
        self.popup.popup()

    def with_screen(self) -> None:
        """`koroku quick-ask --screen`: capture the screen before the popup covers it, open
        the popup, and hand the PNG on through `screen_captured` (failures are told)."""

        async def capture() -> None:
            png = await capture_for_asking(self.capture_failed)
            self.show()
            if png is not None:
                self.screen_captured.emit(png)

        self._keep(capture())

    def _screen_from_popup(self) -> None:
        """The popup's Screen button: hide the popup so it is not in the picture, then
        capture."""
        self.popup.hide()
        QTimer.singleShot(CAPTURE_DELAY_MS, self.with_screen)

    def open_chat_at(self, seq: int) -> None:
        """Show the chat window at the exchange that starts at `seq`, in the conversation
        it went into."""
        self.window.show_and_raise()
        wanted = self.popup.exchange_conversation
        if wanted is not None and wanted != self.runtime.agent.conversation_id:
            self._keep(self._switch_then_scroll(wanted, seq))
        elif seq >= 0:
            QTimer.singleShot(0, lambda: self.window.scroll_to_seq(seq))

    async def _switch_then_scroll(self, conversation_id: str, seq: int) -> None:
        if await self.conversations.switch(conversation_id) and seq >= 0:
            self.window.scroll_to_seq(seq)

    async def close(self) -> None:
        """Cancel quick ask's own turn and compaction (on quit, before the log closes)."""
        self.popup.hide()
        await self.popup.stop_asking()
        await self.router.close()

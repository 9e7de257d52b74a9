"""QuickAskRouter: which conversation, and so which bridge, a quick ask goes into.

The setting `quick_ask_into` says where: "quick_asks" (the default) is a conversation of
quick ask's own, found by its purpose (`ConversationBook.quick_asks`, made on first use);
"current" is the chat window's conversation (the question and its answer appear there too).
A quick ask into Quick asks runs on a second agent and bridge (app/quick_ask_agent.py), made
on first use, so the chat window's conversation stays where it is; when the chat window
itself shows Quick asks, the window's own bridge takes the question (it shows there then).
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QObject, Signal

from koroku_desktop.app.config import Settings
from koroku_desktop.app.quick_ask_agent import QuickAskAgent, quick_ask_agent
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.history_pages import pages_of


class QuickAskRouter(QObject):
    """Chooses the bridge of each quick ask (see the module); owns quick ask's own agent."""

    target_changed = Signal(str)  # "quick_asks" or "current"
    turn_finished = Signal(object)  # TurnResult, of a turn in Quick asks on its own agent
    bridge_made = Signal(object)  # AgentBridge: quick ask's own, on first use

    def __init__(self, runtime: Runtime, bridge: AgentBridge, parent: QObject | None = None):
        super().__init__(parent)
        self.runtime = runtime
        self.main = bridge
        """The chat window's bridge."""
        self.own: AgentBridge | None = None
        """Quick ask's own bridge, on its own agent (None until the first quick ask there)."""
        self._agent: QuickAskAgent | None = None
        self.target = runtime.settings.quick_ask_into
        runtime.settings_store.subscribe(self._settings_changed)

    def _settings_changed(self, settings: Settings) -> None:
        if settings.quick_ask_into != self.target:
            self.target = settings.quick_ask_into
            self.target_changed.emit(self.target)

    def choose(self, target: str) -> str | None:
        """Ask into `target` from now on (the popup's menu): saved as the setting. The
        reason when it cannot be saved (then nothing changed)."""
        try:
            self.runtime.settings_store.update({"quick_ask_into": target})
        except (ValueError, OSError) as exc:  # pydantic's ValidationError is a ValueError
            self.target_changed.emit(self.target)
            return f"Where quick ask asks was not changed: {exc}"
        return None

    async def bridge_for_ask(self) -> AgentBridge:
        """The bridge the next quick ask goes through (Quick asks made on first use).
        Raises what the database raises when it cannot be read or written."""
        if self.target == "current":
            return self.main
        book = self.runtime.conversations
        assert book is not None, "the desktop's runtime always has its conversations"
        conversation = await asyncio.to_thread(book.quick_asks)
        if conversation.id == self.runtime.agent.conversation_id:
            return self.main  # the window shows Quick asks: ask there, seen there
        if self._agent is None or self.own is None:
            self.own = AgentBridge(self)
            self._agent = quick_ask_agent(self.runtime, self.own, conversation)
            self.own.attach(self._agent.agent, pages_of(self.runtime.log, self._agent.agent))
            self.own.attachments = self.runtime.attachments
            self.own.turn_finished.connect(self.turn_finished)
            self.bridge_made.emit(self.own)
        elif not self.own.busy:
            await self._agent.retarget(conversation)  # deleted and made again, or renamed
        return self.own

    async def close(self) -> None:
        """Cancel quick ask's own turn (if one runs) and stop its compaction, before the
        log closes."""
        if self.own is not None:
            await self.own.shutdown()
        if self._agent is not None:
            await self._agent.close()

"""ConversationSwitcher: the desktop's conversations — the sidebar, the narrow window's
drop-down and the tray's recent list filled from the registry, and switching the window
and the agent from one conversation to another.

Every read and write of the registry runs in a worker thread (`ConversationBook` is
blocking); switching loads the chosen conversation's page off the loop and shows it with its
title at once; its live context is read after (`LiveLoads`: a message sent meanwhile waits
for it, shown as queued, and the context meter says "…"). The list follows the log: our own
changes, the titler's, and other processes' (`koroku conversations` in a terminal) through
the log follower's `log_changed`; a read that ends after a later one is not shown (its list
is older). When the conversation shown is deleted elsewhere (or the one being switched to,
while its page loads), the window moves on to the one a start would open (or a new one) and
says so; the text typed in the message box stays. A
switch never waits for a turn: a turn running in the conversation left goes on there with
its own agent (app/agent_pool.py), and the sidebar marks it running, or needing the person
when its approval waits; coming back shows its progress (`AgentBridge.show_lane`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QObject, QSettings, Signal

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.domain.conversations import Conversation, by_recency, pinned_first
from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.domain.events import LogEntry
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.window import ChatWindow
from koroku_desktop.ui.live_loads import LiveLoads
from koroku_desktop.ui.pin_migration import forget_ini_pins, ini_pins, pin_in_log
from koroku_desktop.ui.tray import TrayIcon
from koroku_desktop.ui.widgets.tasks import TaskSet

log = logging.getLogger(__name__)

FIRST_PAGE = 400
TRAY_RECENT = 5
"""How many recent conversations the tray menu lists (pinned ones first)."""


class ConversationSwitcher(QObject):
    """Fills the conversation lists and switches conversations (see the module doc)."""

    listed = Signal(list)  # list[Conversation], as shown (the tray's recent ones follow it)
    switched = Signal(str)  # the id now talked in
    current_title = Signal(str)  # the title of the conversation talked in (the popup says it)

    def __init__(
        self,
        runtime: Runtime,
        bridge: AgentBridge,
        window: ChatWindow,
        ui_settings: QSettings,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        book = runtime.conversations
        assert book is not None, "the desktop's runtime always has its conversations"
        self.book: ConversationBook = book
        self.runtime, self.bridge, self.window = runtime, bridge, window
        self.ui_settings = ui_settings
        self.conversations: list[Conversation] = []
        self._tasks = TaskSet()
        self._refreshing: asyncio.Future[None] | None = None
        self._again = False
        self.switching = False
        self._page_id = ""
        """While a switch reads the next page: the conversation whose page is still shown."""
        self._next: str | None = None
        self._closed = False
        self._reads = 0
        self._shown_read = 0
        """The reads of the list begun, and the latest one shown (an older one is dropped)."""
        self._leaving: str | None = None
        """The deleted conversation the window is moving off, while it does."""
        self.live_loads = LiveLoads(bridge, window.show_hint)
        self.live: asyncio.Future[None] | None = None
        """The shown conversation's live context being read (done: its agent is ready)."""

    @property
    def current_id(self) -> str:
        """The conversation the agent talks in."""
        return self.runtime.agent.conversation_id

    @property
    def shown_id(self) -> str:
        """The conversation whose page the window shows: while a switch reads the next one's
        page, still the one left (the title and the selection change with the page)."""
        return self._page_id if self.switching else self.current_id

    def pinned(self) -> set[str]:
        """The ids the person pinned (`pinned` events: every device's)."""
        return {c.id for c in self.conversations if c.pinned}

    def wire(self, tray: TrayIcon | None, show_chat: Callable[[], None]) -> None:
        """Connect the window's sidebar and drop-down, the tray's recent list (choosing
        one there shows the chat), the bridge and the log follower."""
        if tray is not None:
            self.listed.connect(tray.show_recent)
            tray.conversation_chosen.connect(show_chat)
            tray.conversation_chosen.connect(self.choose)
        sidebar = self.window.sidebar
        sidebar.rename_requested.connect(self.rename)
        sidebar.pin_toggled.connect(self.toggle_pin)
        sidebar.archive_requested.connect(
            lambda cid: self._keep(self._change(self.book.archive, cid))
        )
        sidebar.delete_requested.connect(self.delete)
        self.window.nav.chosen.connect(self.choose)
        self.window.nav.new_requested.connect(self.new)
        self.bridge.turn_finished.connect(lambda _r: self._keep(self._after_turn()))
        self.bridge.log_changed.connect(self.refresh)
        self.bridge.activity_changed.connect(self.show_activity)

    async def close(self) -> None:
        """Stop what is under way (on quit, before the log closes); nothing starts after."""
        self._closed = True
        if self._refreshing is not None:
            self._refreshing.cancel()
        await self._tasks.cancel()
        await self.live_loads.wait()

    def _keep(self, coro: Coroutine[Any, Any, object]) -> None:
        self._tasks.start(coro)

    # -- listing -----------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the registry again (off the loop) and show it; calls during a read coalesce."""
        if self._closed:
            return
        if self._refreshing is not None and not self._refreshing.done():
            self._again = True
            return
        self._refreshing = asyncio.ensure_future(self.load())

    async def load(self) -> None:
        """Read the conversations (deleted ones left out) and show them everywhere; move
        off the conversation shown if it was deleted elsewhere."""
        self._reads += 1
        read = self._reads
        try:
            await self._move_ini_pins()
            every = await asyncio.to_thread(self.book.all, counts=False)
        except Exception:  # a list that cannot be read now is read at the next change
            log.warning("could not read the conversations", exc_info=True)
            return
        finally:
            if self._again and not self._closed:
                self._again = False
                self._keep(self.load())
        if self._closed or read < self._shown_read:  # a later read is shown already
            return
        self._shown_read = read
        self.show(by_recency(c for c in every.values() if not c.deleted))
        gone = every.get(self.current_id)
        if gone is not None and gone.deleted and self._leaving is None and not self.switching:
            self._leaving = gone.id  # now: a read ending before the move starts leaves it
            self._keep(self._deleted_elsewhere(gone))

    async def _move_ini_pins(self) -> None:
        """Pins ui.ini still holds become events, once (see pin_migration.py)."""
        ids = ini_pins(self.ui_settings)
        if not ids:
            return
        try:
            await asyncio.to_thread(pin_in_log, self.book, ids)
        except Exception:  # the log cannot be written now: the key stays, the next load tries
            log.warning("could not move the pins into the log", exc_info=True)
            return
        forget_ini_pins(self.ui_settings)

    def show(self, conversations: list[Conversation]) -> None:
        """Show `conversations` (most recent first) in the sidebar, drop-down and title."""
        self.conversations = conversations
        pinned = self.pinned()
        self.window.nav.show_conversations(conversations, self.shown_id, pinned)
        current = next((c for c in conversations if c.id == self.shown_id), None)
        if current is not None:
            self.current_title.emit(current.title)
        self.listed.emit(tray_recent(conversations))
        self.show_activity()

    def show_activity(self) -> None:
        """Mark the conversations with a turn running, or waiting for the person."""
        running, needs_you = self.bridge.running(), self.bridge.needs_you()
        if (running, needs_you) != self.window.sidebar.activity:
            self.window.sidebar.show_activity(running, needs_you)

    async def _after_turn(self) -> None:
        """A turn ended: its conversation moved up; a new one may be getting its title."""
        self.refresh()
        titler = self.runtime.titler
        if titler is not None and titler.task is not None and not titler.task.done():
            await asyncio.wait([titler.task])
            self.refresh()

    # -- switching ---------------------------------------------------------------------

    def choose(self, conversation_id: str) -> None:
        """Talk in `conversation_id` from now on (the sidebar, drop-down, tray, Ctrl+N)."""
        self._keep(self.switch(conversation_id))

    async def switch(self, conversation_id: str) -> bool:
        """Show and talk in `conversation_id` (a turn running in the one left goes on
        there); False (with a hint) when it cannot be now."""
        if conversation_id == self.current_id and not self.switching:
            self.window.nav.show_conversations(self.conversations, self.current_id, self.pinned())
            return True
        if self.switching:  # the one chosen last is shown once this switch ends
            self._next = conversation_id
            return False
        switched = await self._switch(conversation_id)
        if self._next is not None:  # (also after a switch that could not be made)
            chosen, self._next = self._next, None
            return await self.switch(chosen)
        return switched

    async def _switch(self, conversation_id: str) -> bool:
        self.switching, self._page_id = True, self.current_id
        # One the list shows needs no read (the list follows every change to the log).
        listed = next((c for c in self.conversations if c.id == conversation_id), None)
        try:
            found = listed or await asyncio.to_thread(self.book.get, conversation_id)
            if found is None:
                return False
            self.bridge.hide_lane()
            entries: list[LogEntry] = []
            try:
                await self.runtime.switch_to(found)
                agent = self.runtime.agent
                if agent.loaded:  # kept: what others wrote since, held till shown
                    await agent.catch_up()
                self.window.hide_hint()
                entries = await self.bridge.load_history(None, FIRST_PAGE)
                self.window.set_history(entries)
            finally:  # (on a failure the page shown stays as it was)
                self.bridge.show_lane(entries[-1].seq if entries else 0)
            self.live = self.live_loads.start(agent)
        except Exception as exc:  # a database that cannot be read now
            if not isinstance(exc, KorokuError):
                log.warning("could not switch the conversation", exc_info=True)
            self.window.show_hint(f"Could not switch the conversation: {exc}")
            return False
        finally:
            self.switching = False
        self.switched.emit(conversation_id)
        if any(c.id == conversation_id for c in self.conversations):
            self.show(self.conversations)
        else:  # just made, or deleted elsewhere while its page loaded: the read moves off it
            await self.load()
        self.window.refocus_input()
        return True

    def new(self) -> None:
        """Start a conversation and switch to it (Ctrl+N, the sidebar's New)."""
        self._keep(self.start_new())

    async def start_new(self) -> str | None:
        """Create a conversation (titled `New conversation` until named) and talk in it."""
        try:
            made = await asyncio.to_thread(self.book.create)
        except Exception as exc:  # a database that cannot be written now
            log.warning("could not start a conversation", exc_info=True)
            self.window.show_hint(f"Could not start a conversation: {exc}")
            return None
        return made.id if await self.switch(made.id) else None

    # -- changing ----------------------------------------------------------------------

    def rename(self, conversation_id: str, title: str) -> None:
        """The person's title for it."""
        self._keep(self._change(lambda cid: self.book.rename(cid, title), conversation_id))

    def toggle_pin(self, conversation_id: str) -> None:
        """Pin it on top of the lists, or unpin it (an event: it syncs)."""
        book = self.book.unpin if conversation_id in self.pinned() else self.book.pin
        self._keep(self._change(book, conversation_id))

    def delete(self, conversation_id: str) -> None:
        """Hide it everywhere (an event: restorable from the viewer or the terminal)."""
        self._keep(self._delete(conversation_id))

    async def _delete(self, conversation_id: str) -> None:
        self._leaving = conversation_id  # (the list read after the change leaves it to us)
        try:
            await self._change(self.book.delete, conversation_id)
            if conversation_id == self.current_id:
                await self._move_on(conversation_id)
        finally:
            self._leaving = None

    async def _deleted_elsewhere(self, gone: Conversation) -> None:
        """The conversation shown was deleted by another process (a terminal, the hub):
        move on, and say so (the message box keeps what was typed)."""
        self._leaving = gone.id
        try:
            moved = await self._move_on(gone.id)
        finally:
            self._leaving = None
        if moved:
            now = next((c.title for c in self.conversations if c.id == self.current_id), "")
            self.window.show_hint(
                f"“{gone.title}” was deleted elsewhere (History can restore it)"
                + (f"; now in “{now}”." if now else ".")
            )

    async def _move_on(self, deleted_id: str) -> bool:
        """Leave the deleted conversation shown for the one a start would open, or a new
        one when none is left; False when the switch could not be made."""
        try:
            after = await asyncio.to_thread(self.book.current)
        except Exception:  # a database that cannot be read now: the next change tries again
            log.warning("could not read the conversations", exc_info=True)
            return False
        if after is None or after.id == deleted_id:
            return await self.start_new() is not None
        return await self.switch(after.id)

    async def _change(self, change: Callable[[str], Conversation], conversation_id: str) -> None:
        try:
            await asyncio.to_thread(change, conversation_id)
        except Exception as exc:  # a refusal, or a database that cannot be written now
            if not isinstance(exc, KorokuError):
                log.warning("could not change the conversation", exc_info=True)
            self.window.show_hint(f"The conversation was not changed: {exc}")
        await self.load()


def tray_recent(conversations: list[Conversation]) -> list[Conversation]:
    """What the tray's Recent conversations lists: pinned ones first, then the most recent,
    archived ones left out, at most `TRAY_RECENT`."""
    return pinned_first(c for c in conversations if not c.archived)[:TRAY_RECENT]

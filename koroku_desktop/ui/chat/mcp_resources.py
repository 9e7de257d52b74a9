"""Attaching MCP resources from the chat window's composer.

While a connected server lists resources, the attach button offers a menu — *Files…* and
*MCP resource…* — and the second opens the `ResourcePicker`. The chosen resource is read
through the manager (off the UI's work: a task on the loop) and waits as a chip like a file;
sending stores its bytes in the blob store, so the request can be rebuilt from the log. The
open picker follows the servers' list changes. A resource sent in the conversation (from here
or, followed live, from another front end) is subscribed to where its server allows it;
when it changes, the status bar says so once (the attached copy stays what it was: attach
it again for the new content).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QObject, QPoint
from PySide6.QtWidgets import QMenu

from koroku_desktop.app.runtime import AttachmentRefused, McpManager, McpResourceInfo
from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.ui.chat.resource_picker import ResourcePicker
from koroku_desktop.ui.chat.window import ChatWindow

FILES = "Files…"
RESOURCE = "MCP resource…"


class McpResourceAttacher(QObject):
    """Adds *MCP resource…* to `window`'s attach button and attaches what is picked."""

    def __init__(self, manager: McpManager, window: ChatWindow) -> None:
        super().__init__(window)
        self.manager = manager
        self.window = window
        self.menu: QMenu | None = None
        self.picker: ResourcePicker | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.watched: set[tuple[str, str]] = set()
        """(server, uri) of resources attached here that the server reports changes of."""
        self._told: set[tuple[str, str]] = set()
        window.attach_menu = self.offer
        manager.on_status_changed.append(self._servers_changed)
        manager.on_resource_updated.append(self._updated)
        window.bridge.event_appended.connect(self._appended)
        self.destroyed.connect(self._detach)

    def offer(self) -> bool:
        """The attach button was pressed: show the menu when resources exist (True), else
        leave it to the file dialog (False)."""
        if not self.manager.resources():
            return False
        menu = self.menu = QMenu(self.window)
        menu.setObjectName("AttachMenu")
        menu.addAction(FILES).triggered.connect(self.window.choose_workspace_files)
        menu.addAction(RESOURCE).triggered.connect(self.open_picker)
        button = self.window.attach_button
        menu.popup(button.mapToGlobal(QPoint(0, -menu.sizeHint().height())))
        menu.setActiveAction(menu.actions()[0])
        return True

    def open_picker(self) -> ResourcePicker:
        """Show the picker over the window (not blocking); its choice becomes a chip."""
        picker = self.picker = ResourcePicker(
            self.manager.resources(), self.manager.complete_template, self.window
        )
        picker.resize(min(560, max(320, self.window.width() - 24)), 460)
        picker.chosen.connect(self.attach)
        picker.finished.connect(self._picker_closed)
        picker.open()
        picker.activateWindow()
        picker.search.setFocus()
        return picker

    def _picker_closed(self) -> None:
        self.picker = None
        self.window.refocus_input()

    def attach(self, info: McpResourceInfo, uri: str) -> None:
        """Read `uri` of `info.server` and add its contents as chips (or say why not)."""
        name = f"{info.name} — {uri.rsplit('/', 1)[-1]}" if info.template else info.name
        self.window.show_hint(f"Reading {name} from {info.server}…")

        async def read() -> None:
            try:
                found = await self.manager.read_attachments(info.server, uri, name)
            except AttachmentRefused as exc:
                self.window.hide_hint()  # in place of "Reading…"
                self.window.show_hint(str(exc))
                return
            self.window.hide_hint()
            for pending in found:
                self.window.tray.add_pending(pending)

        self._keep(read())

    def _servers_changed(self) -> None:
        if self.picker is not None:
            self.picker.set_resources(self.manager.resources())

    def _appended(self, stored: StoredEvent) -> None:
        """A message with MCP resources reached the log (sent here or by another front end):
        subscribe to them, so their changes are said."""
        event = stored.event
        if not isinstance(event, MessageEvent) or event.role != "user":
            return
        for part in event.parts:
            if isinstance(part, AttachmentPart) and part.server and part.uri:
                self._keep(self._subscribe(part.server, part.uri))

    async def _subscribe(self, server: str, uri: str) -> None:
        if await self.manager.subscribe(server, uri):
            self.watched.add((server, uri))
            self._told.discard((server, uri))

    def _keep(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _updated(self, server: str, uri: str) -> None:
        """A subscribed resource changed: say so once, until it is attached again."""
        key = (server, uri)
        if key in self.watched and key not in self._told:
            self._told.add(key)
            self.window.show_notice(f"MCP {server}: {uri} changed since it was attached")

    def _detach(self, *_args: object) -> None:
        if self._servers_changed in self.manager.on_status_changed:
            self.manager.on_status_changed.remove(self._servers_changed)
        if self._updated in self.manager.on_resource_updated:
            self.manager.on_resource_updated.remove(self._updated)

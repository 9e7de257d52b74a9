"""The desktop app's composition root: QApplication + qasync loop, runtime, bridge, windows.

`koroku` with no arguments lands in `run_app` (ui/run_app.py). The Gemini SDK is imported
lazily by the runtime, on the first request, so the chat window appears before it loads.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QObject, QSettings
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from koroku_desktop.agent.ports import ChatModel
from koroku_desktop.app.config import Paths, Settings
from koroku_desktop.app.runtime import Runtime, build_runtime
from koroku_desktop.app.settings_store import overriding_variable
from koroku_desktop.ui.background_work import (
    OnFirstShow,
    compact_long_history,
    sync_memory,
    warm_up,
)
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.mcp_elicit_view import WindowElicitor
from koroku_desktop.ui.chat.mcp_progress import McpProgressFollower
from koroku_desktop.ui.chat.mcp_resources import McpResourceAttacher
from koroku_desktop.ui.chat.setup_card import SetupCard, show_setup_if_needed
from koroku_desktop.ui.chat.slash_commands import SlashCommands
from koroku_desktop.ui.chat.welcome import WelcomeCard, welcome_if_first_start
from koroku_desktop.ui.chat.window import ChatWindow
from koroku_desktop.ui.conversation_switcher import ConversationSwitcher
from koroku_desktop.ui.dialogs import bring_up, follow_facts, make_settings
from koroku_desktop.ui.heap import thaw_heap
from koroku_desktop.ui.history_pages import pages_of
from koroku_desktop.ui.portal_shortcuts import GlobalShortcut
from koroku_desktop.ui.quick_ask.desk import QuickAskDesk
from koroku_desktop.ui.settings.dialog import SettingsDialog
from koroku_desktop.ui.single_instance import SingleInstanceServer, server_name
from koroku_desktop.ui.sync_follow import SyncFollower
from koroku_desktop.ui.task_center import TaskCenter
from koroku_desktop.ui.tray import TrayIcon
from koroku_desktop.ui.tray_notices import TrayNotices
from koroku_desktop.ui.viewer.dialog import HistoryDialog
from koroku_desktop.ui.viewer.opening import open_viewer
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.icons import app_icon
from koroku_desktop.ui.widgets.tasks import TaskSet

FIRST_PAGE = 400
OLDER_PAGE = 400


class Desktop(QObject):
    """Everything the running app is: runtime, bridge, chat window, popup, tray, server."""

    def __init__(
        self,
        app: QApplication,
        runtime: Runtime,
        bridge: AgentBridge,
        *,
        use_tray: bool | None = None,
    ) -> None:
        """`runtime` is the composition root's (`build_runtime`, with `bridge` as its
        approver); the desktop owns both from now on and closes the runtime on quit."""
        super().__init__()
        self.app = app
        self.paths = paths = runtime.paths
        self.bridge = bridge
        bridge.setParent(self)
        self.runtime = runtime
        current = lambda: self.runtime.agent  # noqa: E731 (the shown conversation's)
        self.bridge.attach(runtime.agent, pages_of(runtime.log, current), current)
        self._pool_lanes()
        self.bridge.attachments = self.runtime.attachments
        self.runtime.compactor.progress.append(self.bridge.compaction_progress)
        # Window state (popup size, hints shown), not settings a person picks: kept apart
        # from settings.json (see settings_store) so the core never needs to know about it.
        self.ui_settings = QSettings(str(paths.home / "ui.ini"), QSettings.Format.IniFormat)
        theme.apply(app, self.runtime.settings.theme)
        app.setWindowIcon(app_icon())
        workspace = self.runtime.settings.workspace_path()
        self.window = ChatWindow(self.bridge, self.runtime.settings.model, workspace)
        self.quick = QuickAskDesk(runtime, bridge, self.window, workspace, self.ui_settings, self)
        self.popup = self.quick.popup  # where its questions go, its screen capture: self.quick
        self.screen_captured = self.quick.screen_captured
        if use_tray is None:
            use_tray = QSystemTrayIcon.isSystemTrayAvailable()
        self.tray: TrayIcon | None = TrayIcon(self) if use_tray else None
        self.server = SingleInstanceServer(server_name(paths.home), self)
        self.done = asyncio.Event()
        self._quitting = False
        self._tasks = TaskSet()
        self.warm_up: asyncio.Future[None] | None = None
        self.memory_sync: asyncio.Future[None] | None = None
        self.history: HistoryDialog | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.global_shortcut = GlobalShortcut()
        self.welcome: WelcomeCard | None = welcome_if_first_start(
            self.window, self.runtime.settings_store, paths, tray=self.tray is not None
        )
        self.setup_card: SetupCard | None = show_setup_if_needed(self.window, self.runtime.model)
        self.conversations = ConversationSwitcher(runtime, bridge, self.window, self.ui_settings)
        """The sidebar, the drop-down, the tray's recent list, and switching between them."""
        self.notices = TrayNotices(
            self.bridge, self.window, self.popup, self.tray, self.ui_settings
        )
        """The tray icon's state and notifications."""
        self.tasks = TaskCenter(runtime, bridge.approve, lambda: runtime.agent.conversation_id)
        """Scheduled tasks: the scheduler, notifications, the Tasks tab."""
        self._wire()

    def _pool_lanes(self) -> None:
        """Each conversation's agent gets a lane in the bridge, kept while it has turns."""
        pool = self.runtime.pool
        if pool is not None:
            pool.built.append(self.bridge.subscribe)
            pool.released.append(self.bridge.release)
            pool.in_use, self.bridge.lane_idle = self.bridge.in_use, lambda _a: pool.release_idle()

    def _wire(self) -> None:
        self.window.older_requested.connect(self._load_older)
        self.window.closed.connect(self.request_quit)
        self.window.history_requested.connect(self.show_history)
        self.window.history_seq_requested.connect(self.show_in_history)
        self.window.settings_requested.connect(self.show_settings)
        self.window.model_chosen.connect(self._choose_model)
        follow = lambda stored: follow_facts(stored, self.history, self.settings_dialog)  # noqa: E731
        self.bridge.event_appended.connect(follow)
        self.bridge.background_event.connect(follow)  # a fact said in a conversation not shown
        self._show_model(self.runtime.settings)
        if self.setup_card is not None:
            self.setup_card.key_stored.connect(self._key_changed)
        self.server.show_requested.connect(self.show_chat)
        self.server.quick_ask_requested.connect(self.show_quick_ask)
        self.server.quick_ask_screen_requested.connect(self.quick.with_screen)
        self.notices.wire()
        self.conversations.wire(self.tray, self.show_chat)
        self.conversations.switched.connect(self._forget_viewer)
        self.quick.wire(self.conversations, self._keep, self.notices)
        self.tasks.wire(self.bridge, self.conversations, self.notices, self.window, self.show_chat)
        if self.tray is not None:
            self.window.hide_on_close = True
            self.tray.open_chat.connect(self.show_chat)
            self.tray.quick_ask.connect(self.show_quick_ask)
            self.tray.quit_requested.connect(self.request_quit)
            self.tray.history_requested.connect(self.show_history)
            self.tray.settings_requested.connect(self.show_settings)
            self.tray.chat_shortcuts.connect(self.show_chat)
            self.tray.chat_shortcuts.connect(self.window.show_shortcuts)
            self.tray.show()

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self, *, show_window: bool = True) -> None:
        """Show the window, then fill it from the log (read off the event loop)."""
        if show_window:
            self.window.show()
        self.server.listen()
        entries = await self.bridge.load_history(None, FIRST_PAGE)
        self.window.set_history(entries)
        await self.conversations.load()  # the title and the sidebar: a few index lookups
        await self.conversations.live_loads.start(self.runtime.agent)  # (long: read after)
        # Turns and compactions made in a terminal (or another app) appear here live.
        db = self.runtime.paths.db
        self.bridge.follow(self.runtime.log.data_version, [db, db.with_name(db.name + "-wal")])
        SyncFollower(self.runtime, self.bridge, self._reload, self._keep).start()
        self.memory_sync = asyncio.ensure_future(sync_memory(self.runtime))  # off the start-up path
        if show_window:
            self._warm_up()
        else:  # in the tray: warm up when a window is first opened, not while unused
            OnFirstShow([self.window, self.popup], self._warm_up)
        if self.runtime.mcp is not None:
            self.mcp_progress = McpProgressFollower(self.runtime.mcp, self.window.model, self)
            self.mcp_resources = McpResourceAttacher(self.runtime.mcp, self.window)
            self.slash_commands = SlashCommands(self.runtime.mcp, self.window)
            self.mcp_elicitor = WindowElicitor(self.window.approvals)
            self.runtime.mcp.elicitor = self.mcp_elicitor
        self._keep(self.runtime.start_mcp(notice=self.window.show_notice))  # after the window
        shortcut = self.runtime.settings.quick_ask_shortcut
        self._keep(self.global_shortcut.bind(self.show_quick_ask, shortcut))
        self._keep(compact_long_history(self.runtime))
        self._keep(self.tasks.start())

    async def _reload(self) -> None:
        """Show the chat again from the log after a reordering sync (the agent rebuilt its
        live context when it noticed; it is never dropped, so a turn can always read it)."""
        await self.conversations.live_loads.start(self.runtime.agent)
        self.window.set_history(await self.bridge.load_history(None, FIRST_PAGE))

    def _load_older(self, before_seq: int) -> None:
        async def load() -> None:
            entries = await self.bridge.load_history(before_seq, OLDER_PAGE)
            self.window.prepend_history(entries)

        self._keep(load())

    def request_quit(self) -> None:
        """Quit after the running turn is cancelled cleanly."""
        if not self._quitting:
            self._quitting = True
            self._keep(self.quit())

    def _keep(self, coro: Coroutine[Any, Any, None]) -> None:
        self._tasks.start(coro)

    async def quit(self) -> None:
        """Cancel turns, close the windows, the server and the database."""
        self._quitting = True
        await self.global_shortcut.close()
        await self.tasks.close()
        await self.conversations.close()
        await self.bridge.shutdown()
        await self.quick.close()
        pool = self.runtime.pool  # every conversation's: nothing half-written, resumed later
        await (pool.stop_background() if pool else self.runtime.compactor.cancel())
        if self.memory_sync is not None:  # a write under way ends before the database closes
            self.memory_sync.cancel()
            await asyncio.wait([self.memory_sync])
        if self.warm_up is not None:
            # The import runs in a worker thread that cannot be cancelled; let it finish
            # before Qt and the database go away.
            with contextlib.suppress(Exception):
                await self.warm_up
        self.server.close()
        with contextlib.suppress(Exception):
            await self.runtime.stop_mcp()  # stdio servers terminated, none left behind
        if self.tray is not None:
            self.tray.hide()
        self.popup.hide()
        self.window.hide_on_close = False
        self.window.hide()
        for dialog in (self.history, self.settings_dialog):
            if dialog is not None:
                dialog.close()
        self.runtime.close()
        thaw_heap()
        self.done.set()

    # -- showing -----------------------------------------------------------------------

    def show_chat(self) -> None:
        """Show and raise the chat window."""
        self.window.show_and_raise()

    def show_quick_ask(self) -> None:
        """Open the quick-ask popup near the cursor."""
        self.quick.show()

    def show_history(self) -> HistoryDialog:
        """Open (or raise) the History & memory viewer."""
        if self.history is None:
            self.history = open_viewer(self.runtime)
            self.history.conversations_changed.connect(self.conversations.refresh)
            self.history.finished.connect(self.window.refocus_input)
        else:
            self.history.refresh()
        bring_up(self.history)
        return self.history

    def _forget_viewer(self, _conversation_id: str) -> None:
        """The viewer's compactions, live export and memory edits are of the conversation
        talked in: the next one opened follows the new one."""
        if self.history is not None:
            self.history.close()
            self.history.deleteLater()
            self.history = None

    def show_in_history(self, seq: int) -> HistoryDialog:
        """Open the viewer at event `seq`, selected (a remembered passage's source)."""
        dialog = self.show_history()
        dialog.jump_to(seq)
        return dialog

    def show_settings(self) -> SettingsDialog:
        """Open (or raise) the Settings dialog."""
        if self.settings_dialog is None or not self.settings_dialog.isVisible():
            self.settings_dialog = make_settings(self.runtime, self.tasks.make_panel())
            self.settings_dialog.applied.connect(self._settings_applied)
            self.settings_dialog.key_changed.connect(self._key_changed)
            self.settings_dialog.finished.connect(self.window.refocus_input)
        bring_up(self.settings_dialog)
        return self.settings_dialog

    def _choose_model(self, model: str) -> None:
        """The composer's model picker: the same setting as Settings → Model, saved now."""
        try:
            settings = self.runtime.settings_store.update({"model": model})
        except (ValueError, OSError) as exc:  # pydantic's ValidationError is a ValueError
            self.window.show_hint(f"The model was not changed: {exc}")
            self._show_model(self.runtime.settings)
            return
        self._settings_applied(settings)

    def _show_model(self, settings: Settings) -> None:
        self.window.composer.model_picker.show_model(settings.model, overriding_variable("model"))

    def _settings_applied(self, settings: Settings) -> None:
        self.window.model_label.setText(settings.model)
        self._show_model(settings)
        self.bridge.emit_meter()

    def _key_changed(self) -> None:
        """A key was stored (setup card or settings): drop the setup card, warm the SDK up."""
        if self.setup_card is not None and self.runtime.model.has_key:
            self.setup_card.hide()
            self.setup_card.deleteLater()
            self.setup_card = None
        self.warm_up = asyncio.ensure_future(warm_up(self.runtime))

    def _warm_up(self) -> None:
        if self.warm_up is None and not self._quitting:
            self.warm_up = asyncio.ensure_future(warm_up(self.runtime))


def open_desktop(
    app: QApplication,
    paths: Paths,
    *,
    use_tray: bool | None = None,
    model: ChatModel | None = None,
) -> Desktop:
    """The desktop app on the data dir `paths`: the composition root builds the runtime (with
    the bridge as its approver) and hands it to `Desktop`. `model` replaces Gemini as the
    agent's model (tests hand in a `FakeChatModel`). Raises as `build_runtime` does."""
    bridge = AgentBridge()
    runtime = build_runtime(bridge, paths, model=model)
    try:
        return Desktop(app, runtime, bridge, use_tray=use_tray)
    except BaseException:
        runtime.close()
        raise

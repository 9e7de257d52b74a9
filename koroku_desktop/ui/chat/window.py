"""ChatWindow: the conversation, inline approvals, the queue, the composer and a status bar."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QMainWindow, QToolButton, QVBoxLayout, QWidget

from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.domain.events import LogEntry, StoredEvent
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.attachment_rows import THUMBNAILS
from koroku_desktop.ui.chat.card_area import CardArea
from koroku_desktop.ui.chat.clear_dialog import clear_question
from koroku_desktop.ui.chat.composer import Composer
from koroku_desktop.ui.chat.conversation_nav import ConversationNav
from koroku_desktop.ui.chat.conversation_view import ConversationView
from koroku_desktop.ui.chat.empty_state import EmptyState
from koroku_desktop.ui.chat.file_drops import AttachmentDrops
from koroku_desktop.ui.chat.find_bar import FindBar
from koroku_desktop.ui.chat.header import ChatHeader
from koroku_desktop.ui.chat.inline_notice import InlineNotice
from koroku_desktop.ui.chat.last_turn import LastTurnActions
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.chat.queued_strip import QueuedStrip
from koroku_desktop.ui.chat.row_actions import RowActions
from koroku_desktop.ui.chat.row_painting import MAX_COLUMN
from koroku_desktop.ui.chat.send_guard import looks_like_api_key
from koroku_desktop.ui.chat.setup_card import SetupCard
from koroku_desktop.ui.chat.status_bar import ChatStatusBar
from koroku_desktop.ui.chat.turn_status import TurnStatus
from koroku_desktop.ui.chat.window_keys import WindowKeys
from koroku_desktop.ui.widgets.approval_stack import ApprovalStack
from koroku_desktop.ui.widgets.icons import app_icon

NARROW = 600
"""Below this width the status bar shortens the context meter's words to a percentage."""


class ChatWindow(AttachmentDrops, WindowKeys, QMainWindow):
    """The main window. Reports intent through the bridge's slots and its own signals.

    Files dropped on it, pasted into the message box or chosen with the paper clip wait as
    chips above the box and go with the next message (`attach_bytes` adds a screenshot too).
    Its own keys (Ctrl+L, Find, the shortcut sheet, Esc) are `WindowKeys`'.
    """

    older_requested = Signal(int)
    history_requested = Signal()
    history_seq_requested = Signal(int)  # "Show in history" on a remembered passage
    settings_requested = Signal()
    model_chosen = Signal(str)  # the composer's model picker
    hidden_to_tray = Signal()
    closed = Signal()

    def __init__(
        self, bridge: AgentBridge, model_name: str, workspace: Path, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.workspace = workspace
        self.attach_menu: Callable[[], bool] | None = None  # files or MCP; False: files
        self.slash_command: Callable[[str], bool] | None = None  # True: an MCP prompt ran
        self.hide_on_close = False
        self.setup_card: SetupCard | None = None
        self.setWindowTitle("Koroku")
        self.setWindowIcon(app_icon())
        self.resize(900, 760)
        self.setMinimumSize(360, 360)
        self.model = MessageModel(self)
        root = QWidget()
        root.setObjectName("ChatRoot")
        self.setCentralWidget(root)
        self.nav = ConversationNav(self, self._header_widget(), self.header.title)
        self.sidebar = self.nav.sidebar
        beside = QHBoxLayout(root)
        beside.setContentsMargins(0, 0, 0, 0)
        beside.setSpacing(0)
        beside.addWidget(self.sidebar)
        column = QWidget()
        beside.addWidget(column, 1)
        outer = QVBoxLayout(column)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.header)
        self.cards = CardArea(self._card_room)
        outer.addWidget(self.cards)
        self.view = ConversationView(self.model)
        self.view.older_requested.connect(self.older_requested)
        self.view.copied.connect(lambda _t: self.statusBar().showMessage("Copied", 1500))
        self.row_actions = RowActions(self, self)
        self.view.action_requested.connect(self.row_actions.run)
        self.turn_status = TurnStatus(bridge, self.model, self)
        bridge.retrying.connect(self.turn_status.on_retry)
        outer.addWidget(self.view, 1)
        self.empty = EmptyState()
        self.empty.prompt_chosen.connect(self._use_example)
        outer.addWidget(self.empty, 1)
        self._filler = QWidget()  # takes the room while the setup card hides the examples
        outer.addWidget(self._filler, 1)
        for signal in (self.model.rowsInserted, self.model.rowsRemoved, self.model.modelReset):
            signal.connect(self._show_empty)
        bottom = self._bottom = QWidget()
        col = QVBoxLayout(bottom)
        col.setContentsMargins(20, 6, 20, 14)
        col.setSpacing(8)
        self.approvals = ApprovalStack(bridge, workspace)
        col.addWidget(self.approvals)
        self.find_bar = FindBar(self.view)
        self.find_bar.closed.connect(self.refocus_input)
        col.addWidget(self.find_bar)
        self.queued_strip = QueuedStrip()
        col.addWidget(self.queued_strip)
        self.notice = InlineNotice()
        col.addWidget(self.notice)
        composer = self._composer(model_name)
        self.approvals.focus_after = self.input
        self.queued_strip.wire(
            bridge, self.input, lambda text, ms: self.statusBar().showMessage(text, ms)
        )
        self.queued_strip.acted.connect(self.refocus_input)
        self.last_turn = LastTurnActions(self, bridge, self)
        col.addWidget(self.last_turn.banner)
        col.addWidget(composer)
        self.cards.follow_size_of(bottom)
        # Approvals, queue and composer line up with the conversation's centred column.
        bottom.setMaximumWidth(MAX_COLUMN + 40)
        centred = QHBoxLayout()
        centred.addStretch(1)
        centred.addWidget(bottom, 100)
        centred.addStretch(1)
        outer.addLayout(centred)
        self.status_bar = ChatStatusBar(model_name)
        self.setStatusBar(self.status_bar)
        # Its labels and meter stay reachable here too, as before the bar was split out.
        self.model_label, self.sync_label = self.status_bar.model_label, self.status_bar.sync_label
        self.meter, self.meter_label = self.status_bar.meter, self.status_bar.meter_label
        self._show_empty()
        self._connect(bridge)
        self.wire_attachments(self)
        self.open_url = QDesktopServices.openUrl
        """Opens an attachment's copy (tests record the URL instead)."""
        THUMBNAILS.use(bridge.attachments)
        self.bind_keys(self)
        self.input.setFocus()

    # -- building ----------------------------------------------------------------------

    def _header_widget(self) -> QToolButton:
        self.header = ChatHeader()
        self.thoughts_button = self.header.thoughts_button
        self.thoughts_button.toggled.connect(self.model.set_show_thoughts)
        self.clear_button = self.header.clear_button
        self.clear_button.clicked.connect(self.confirm_clear)
        self.history_button = self.header.history_button
        self.history_button.clicked.connect(self.history_requested)
        self.settings_button = self.header.settings_button
        self.settings_button.clicked.connect(self.settings_requested)
        self.header.shortcuts_button.clicked.connect(self.show_shortcuts)
        for button in self.header.buttons():
            button.clicked.connect(self.refocus_input)
        return self.header.sidebar_button

    def _show_empty(self, *_args: object) -> None:
        empty = self.model.rowCount() == 0
        # Example prompts cannot be sent before there is a key: the setup card gets the room.
        self.empty.setVisible(empty and self.setup_card is None)
        self.view.setVisible(not empty)
        self._filler.setVisible(empty and self.setup_card is not None)

    def _card_room(self) -> int:
        """The height the first-run cards may take: what the header, the composer column
        and the conversation (or the example prompts) leave."""
        root = self.centralWidget()
        assert root is not None
        used = self.header.sizeHint().height() + self._bottom.sizeHint().height()
        if self.empty.isVisibleTo(root):
            # At this width, not the hint's: wrapped lines make a narrow window's examples
            # taller, and the cards must leave them that (else the two overlap).
            layout = self.empty.layout()
            at_width = layout.minimumHeightForWidth(root.width()) if layout is not None else -1
            used += max(self.empty.minimumSizeHint().height(), at_width)
        elif self.view.isVisibleTo(root):
            used += 120
        return root.height() - used

    def _use_example(self, text: str) -> None:
        self.input.setPlainText(text)
        self.input.moveCursor(self.input.textCursor().MoveOperation.End)
        self.refocus_input()

    def refocus_input(self) -> None:
        """Give the keyboard back to the message box after a button took or hid the focus."""
        QTimer.singleShot(0, self, self._focus_input)  # not after the window is gone

    def _focus_input(self) -> None:
        if self.isVisible() and not self.isActiveWindow():
            self.activateWindow()  # a closed dialog leaves no window with the keyboard
        self.input.setFocus(Qt.FocusReason.OtherFocusReason)

    def insert_card(self, card: QWidget) -> None:
        """Show a card (first-run setup, welcome) between the header and the conversation."""
        self.cards.add(card)
        if isinstance(card, SetupCard):
            self.setup_card = card
            self._show_empty()
            card.key_stored.connect(self._setup_done)
            card.destroyed.connect(self._setup_done)
        card.destroyed.connect(self._card_gone)

    def _setup_done(self) -> None:
        self.setup_card = None
        self.hide_hint()
        self._show_empty()

    def _card_gone(self) -> None:
        QTimer.singleShot(0, self.cards.fit)
        self.refocus_input()

    def _composer(self, model_name: str) -> Composer:
        box = self.composer = Composer(model_name)
        box.model_picker.chosen.connect(self.model_chosen)
        box.model_picker.chosen.connect(self.refocus_input)
        self.tray, self.input = box.tray, box.input
        self.attach_button, self.send_button = box.attach_button, box.send_button
        self.stop_button = box.stop_button
        self.attach_button.clicked.connect(self._attach_files)
        self.send_button.clicked.connect(self.refocus_input)
        self.input.submitted.connect(self.submit)
        self.stop_button.clicked.connect(self.bridge.cancel)
        self.stop_button.clicked.connect(self.refocus_input)
        return box

    def _attach_files(self) -> None:
        if self.attach_menu is None or not self.attach_menu():  # a menu: files or MCP
            self.choose_workspace_files()

    def choose_workspace_files(self) -> None:
        """The file dialog in the workspace; the chosen files become chips."""
        dialog = self.tray.choose_files(self, self.workspace)
        dialog.finished.connect(self.refocus_input)

    def _connect(self, bridge: AgentBridge) -> None:
        bridge.event_appended.connect(self.on_event)
        bridge.text_delta.connect(self.model.append_delta)
        bridge.tool_started.connect(self.model.tool_started)
        bridge.tool_finished.connect(self.model.tool_finished)
        bridge.turn_finished.connect(self.on_turn_finished)
        bridge.queue_changed.connect(self.show_queue)
        bridge.busy_changed.connect(self.on_busy)
        self.status_bar.follow(bridge)

    # -- content -----------------------------------------------------------------------

    def set_history(self, entries: list[LogEntry]) -> None:
        """Show a page of the log (seq order) and scroll to the newest message."""
        self.model.set_entries(entries)
        self.view.scroll_to_bottom()

    def prepend_history(self, entries: list[LogEntry]) -> None:
        """Add an older page at the top without moving what the user looks at."""
        self.view.prepare_prepend()
        self.view.older_loaded(self.model.prepend_entries(entries))

    def on_event(self, stored: StoredEvent) -> None:
        """A new event in the log: add its rows."""
        self.model.append_event(stored)

    def on_turn_finished(self, result: TurnResult) -> None:
        """Drop a half-streamed answer nobody persisted."""
        self.model.end_stream()

    def on_busy(self, busy: bool) -> None:
        """Show Stop while a turn runs."""
        self.stop_button.setVisible(busy)

    def show_queue(self, _texts: list[str]) -> None:
        """Show messages waiting for their turn as chips (each can be edited or removed)."""
        self.queued_strip.show_turns(self.bridge.queued_turns)

    def failure(self) -> str | None:
        """The full text of the failure shown under the conversation, if any."""
        notices = [i for i in self.model.items() if i.kind == "turn_notice" and i.tool == "error"]
        return notices[-1].text if notices else None

    def retry(self) -> None:
        """Run the failed turn again (its message is already in the log)."""
        self.model.drop_turn_notices("error")
        self.bridge.retry()
        self.refocus_input()

    def submit(self, text: str) -> None:
        """Send what the user typed, unless it is a key or no key is set up yet."""
        if self.slash_command is not None and self.slash_command(text):
            return
        if looks_like_api_key(text):
            if self.input.history and self.input.history[-1] == text:
                self.input.history.pop()  # never recallable with Up
            self.show_hint(
                "That looks like an API key, so it was not sent to the conversation. "
                + self._key_hint()
            )
            return
        if self.setup_card is not None and not self.setup_card.model.has_key:
            self.input.setPlainText(text)
            self.show_hint(
                "Koroku needs a Gemini API key before it can answer. " + self._key_hint()
            )
            return
        self.hide_hint()
        self.view.scroll_to_bottom()  # what is sent, and its answer, are what to look at
        if self.last_turn.editing is not None:
            self.last_turn.send_edit(text)
        else:
            self.bridge.send(text, attachments=self.tray.take())

    def _key_hint(self) -> str:
        card = self.setup_card
        if card is not None and card.has_keyring:
            card.focus_entry()
            return "Paste it into the setup card above."
        if card is not None:
            return "Set GEMINI_API_KEY in your environment (see the setup card above)."
        return "Store keys in Settings → Gemini API key."

    def show_notice(self, line: str) -> None:
        """A one-line notice (e.g. an MCP server that failed) in the status bar for a while."""
        self.status_bar.show_notice(line)

    def show_hint(self, text: str) -> None:
        """A sentence above the message box about what just did not happen and why; several
        stack until the next message is sent."""
        self.notice.add(text)

    def hide_hint(self) -> None:
        """Drop the notice above the message box."""
        self.notice.setVisible(False)

    def show_meter(self, used: int, threshold: int) -> None:
        """Context use against the compaction threshold."""
        self.status_bar.show_meter(used, threshold)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Narrow windows keep the model and the meter, with a percentage instead of its words
        (the composer leaves its model picker out by itself when it is narrow)."""
        super().resizeEvent(event)
        self.status_bar.set_wide(event.size().width() >= NARROW)
        self.nav.set_width(event.size().width())
        self.cards.fit()

    def scroll_to_seq(self, seq: int) -> None:
        """Scroll so the exchange starting at event `seq` is at the top."""
        self.view.show_held(seq)
        row = self.model.row_of_seq(seq)
        if row >= 0:
            self.view.scroll_to_row(row)

    def confirm_clear(self) -> None:
        """Ask, then append a `cleared` event (the history stays in the log)."""
        box, clear = clear_question(self)
        box.finished.connect(lambda _r: box.clickedButton() is clear and self.bridge.clear())
        box.finished.connect(self.refocus_input)
        box.open()

    def show_and_raise(self) -> None:
        """Show, un-minimise and raise the window with the focus in the input."""
        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()
        QTimer.singleShot(0, self, self._focus_answer_or_input)

    def _focus_answer_or_input(self) -> None:
        """A waiting approval gets the focus first, else the message box."""
        if not self.approvals.focus_first():
            self._focus_input()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Hide to the tray instead of quitting when a tray is available."""
        if self.hide_on_close:
            event.ignore()
            self.hide()
            self.hidden_to_tray.emit()
        else:
            super().closeEvent(event)
            self.closed.emit()

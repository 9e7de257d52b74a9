"""ChatWindow: the conversation, inline approvals, the queue, the composer and a status bar."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.domain.events import LogEntry, StoredEvent
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.conversation_view import ConversationView
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.widgets.approval_stack import ApprovalStack
from koroku_desktop.ui.widgets.chat_input import ChatInput
from koroku_desktop.ui.widgets.icons import app_icon


class ChatWindow(QMainWindow):
    """The main window. Reports intent through the bridge's slots and its own signals."""

    older_requested = Signal(int)
    history_requested = Signal()
    settings_requested = Signal()
    hidden_to_tray = Signal()
    closed = Signal()

    def __init__(
        self, bridge: AgentBridge, model_name: str, workspace: Path, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.hide_on_close = False
        self.setWindowTitle("Koroku")
        self.setWindowIcon(app_icon())
        self.resize(900, 760)
        self.setMinimumSize(420, 360)
        self.model = MessageModel(self)
        root = QWidget()
        root.setObjectName("ChatRoot")
        self.setCentralWidget(root)
        outer = QVBoxLayout(root)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self._header())
        self._cards_box = QWidget()
        self._cards = QVBoxLayout(self._cards_box)
        self._cards.setContentsMargins(20, 6, 20, 6)
        self._cards.setSpacing(10)
        self._cards_box.setVisible(False)
        outer.addWidget(self._cards_box)
        self.view = ConversationView(self.model)
        self.view.older_requested.connect(self.older_requested)
        self.view.copied.connect(lambda _t: self.statusBar().showMessage("Copied", 1500))
        outer.addWidget(self.view, 1)
        bottom = QWidget()
        col = QVBoxLayout(bottom)
        col.setContentsMargins(20, 6, 20, 14)
        col.setSpacing(8)
        self.approvals = ApprovalStack(bridge, workspace)
        col.addWidget(self.approvals)
        self.queued_strip = QFrame()
        self.queued_strip.setObjectName("QueuedStrip")
        self._queued_layout = QHBoxLayout(self.queued_strip)
        self._queued_layout.setContentsMargins(0, 0, 0, 0)
        self.queued_strip.setVisible(False)
        col.addWidget(self.queued_strip)
        col.addWidget(self._composer())
        outer.addWidget(bottom)
        self._status_bar(model_name)
        self._connect(bridge)
        focus = QShortcut(QKeySequence("Ctrl+L"), self)
        focus.activated.connect(self.input.setFocus)
        self.input.setFocus()

    # -- building ----------------------------------------------------------------------

    def _header(self) -> QWidget:
        bar = QWidget()
        row = QHBoxLayout(bar)
        row.setContentsMargins(20, 10, 14, 4)
        title = QLabel("<b>Koroku</b>")
        row.addWidget(title)
        row.addStretch(1)
        self.thoughts_button = QToolButton()
        self.thoughts_button.setText("Show thoughts")
        self.thoughts_button.setCheckable(True)
        self.thoughts_button.toggled.connect(self.model.set_show_thoughts)
        row.addWidget(self.thoughts_button)
        self.clear_button = QToolButton()
        self.clear_button.setText("Clear conversation…")
        self.clear_button.clicked.connect(self.confirm_clear)
        row.addWidget(self.clear_button)
        self.history_button = QToolButton()
        self.history_button.setText("History && memory")
        self.history_button.clicked.connect(self.history_requested)
        row.addWidget(self.history_button)
        self.settings_button = QToolButton()
        self.settings_button.setText("Settings")
        self.settings_button.clicked.connect(self.settings_requested)
        row.addWidget(self.settings_button)
        return bar

    def insert_card(self, card: QWidget) -> None:
        """Show a card (first-run setup, welcome) between the header and the conversation."""
        self._cards.addWidget(card)
        self._cards_box.setVisible(True)
        card.destroyed.connect(self._hide_empty_cards)

    def _hide_empty_cards(self) -> None:
        QTimer.singleShot(0, lambda: self._cards_box.setVisible(self._cards.count() > 0))

    def _composer(self) -> QFrame:
        box = QFrame()
        box.setObjectName("Composer")
        row = QHBoxLayout(box)
        row.setContentsMargins(14, 8, 8, 8)
        row.setSpacing(8)
        self.input = ChatInput("Message Koroku — Enter sends, Shift+Enter adds a line")
        self.input.submitted.connect(self.bridge.send)
        row.addWidget(self.input, 1)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("Send")
        self.send_button.clicked.connect(self.input.submit)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("Stop")
        self.stop_button.setVisible(False)
        self.stop_button.clicked.connect(self.bridge.cancel)
        for b in (self.stop_button, self.send_button):
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            row.addWidget(b, 0, Qt.AlignmentFlag.AlignBottom)
        return box

    def _status_bar(self, model_name: str) -> None:
        bar = self.statusBar()
        bar.setSizeGripEnabled(False)
        self.model_label = QLabel(model_name)
        bar.addWidget(self.model_label)
        self.error_label = QLabel()
        self.error_label.setObjectName("ErrorLabel")
        self.error_label.setVisible(False)
        bar.addWidget(self.error_label, 1)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setVisible(False)
        self.retry_button.clicked.connect(self._retry)
        bar.addWidget(self.retry_button)
        self.meter = QProgressBar()
        self.meter.setObjectName("Meter")
        self.meter.setTextVisible(False)
        self.meter.setRange(0, 1000)
        self.meter.setFixedWidth(110)
        self.meter_label = QLabel("context —")
        bar.addPermanentWidget(self.meter_label)
        bar.addPermanentWidget(self.meter)
        bar.setContentsMargins(8, 2, 14, 2)

    def _connect(self, bridge: AgentBridge) -> None:
        bridge.event_appended.connect(self.on_event)
        bridge.text_delta.connect(self.model.append_delta)
        bridge.tool_started.connect(self.model.tool_started)
        bridge.tool_finished.connect(self.model.tool_finished)
        bridge.turn_finished.connect(self.on_turn_finished)
        bridge.turn_started.connect(lambda _t: self.clear_error())
        bridge.error.connect(self.show_error)
        bridge.queue_changed.connect(self.show_queue)
        bridge.busy_changed.connect(self.on_busy)
        bridge.context_meter.connect(self.show_meter)
        bridge.context_cache_note.connect(self.show_cache_note)
        bridge.status.connect(lambda text: self.statusBar().showMessage(text, 10_000))

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

    def show_queue(self, texts: list[str]) -> None:
        """Show messages waiting for their turn as chips."""
        while self._queued_layout.count():
            child = self._queued_layout.takeAt(0)
            widget = child.widget() if child is not None else None
            if widget is not None:
                widget.deleteLater()
        for text in texts:
            short = text if len(text) < 60 else text[:57] + "…"
            chip = QLabel(f"Queued · {short}")
            chip.setObjectName("QueuedChip")
            chip.setToolTip(text)
            self._queued_layout.addWidget(chip)
        self._queued_layout.addStretch(1)
        self.queued_strip.setVisible(bool(texts))

    def show_error(self, message: str) -> None:
        """Show a failed turn in the status bar with Retry."""
        first = message.strip().splitlines()[0] if message.strip() else "The request failed"
        self.error_label.setText(f"⚠ {first}")
        self.error_label.setToolTip(message)
        self.error_label.setVisible(True)
        self.retry_button.setVisible(True)

    def show_notice(self, line: str) -> None:
        """A one-line notice (e.g. an MCP server that failed) in the status bar for a while."""
        self.statusBar().showMessage(f"⚠ {line}", 15_000)

    def clear_error(self) -> None:
        """Hide the error and Retry."""
        self.error_label.setVisible(False)
        self.retry_button.setVisible(False)

    def _retry(self) -> None:
        self.clear_error()
        self.bridge.retry()

    def show_meter(self, used: int, threshold: int) -> None:
        """Context use against the compaction threshold."""
        fraction = used / threshold if threshold else 0.0
        self.meter.setValue(min(1000, int(fraction * 1000)))
        self.meter_label.setText(f"context {used / 1000:.1f}k / {threshold / 1000:.0f}k")
        self._meter_tip = f"{fraction:.0%} of the context before Koroku compacts it"
        self._show_meter_tip()

    def show_cache_note(self, note: str) -> None:
        """How much of the last request Gemini served from its prompt cache (in the tooltip)."""
        self._cache_note = note
        self._show_meter_tip()

    def _show_meter_tip(self) -> None:
        tip = getattr(self, "_meter_tip", "")
        note = getattr(self, "_cache_note", "")
        self.meter.setToolTip(f"{tip}\n{note}" if note else tip)

    def scroll_to_seq(self, seq: int) -> None:
        """Scroll so the exchange starting at event `seq` is at the top."""
        row = self.model.row_of_seq(seq)
        if row >= 0:
            self.view.scroll_to_row(row)

    def confirm_clear(self) -> None:
        """Ask, then append a `cleared` event (the history stays in the log)."""
        box = QMessageBox(self)
        box.setWindowTitle("Clear conversation")
        box.setText("Start a fresh conversation?")
        box.setInformativeText(
            "Koroku stops seeing the current conversation. Nothing is deleted: it stays in "
            "the history and can still be recalled."
        )
        box.setStandardButtons(QMessageBox.StandardButton.Cancel)
        clear = box.addButton("Clear", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda _r: box.clickedButton() is clear and self.bridge.clear())
        box.open()

    def show_and_raise(self) -> None:
        """Show, un-minimise and raise the window with the focus in the input."""
        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()
        QTimer.singleShot(0, self.input.setFocus)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Hide to the tray instead of quitting when a tray is available."""
        if self.hide_on_close:
            event.ignore()
            self.hide()
            self.hidden_to_tray.emit()
        else:
            super().closeEvent(event)
            self.closed.emit()

"""QuickAskPopup: a frameless, on-top box near the cursor that asks one question.

It asks into quick ask's own conversation ("Quick asks") or the chat window's, as the
setting says and its header shows ("→ Quick asks"); `route` (QuickAskRouter) picks the
bridge of each question, and the popup follows that bridge's signals for the exchange."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCursor, QGuiApplication, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizeGrip,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.app.runtime import DB_ERRORS
from koroku_desktop.domain.attachment import PendingAttachment
from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart
from koroku_desktop.render.fold import message_blocks
from koroku_desktop.render.text import mark, short_args
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.file_drops import AttachmentDrops
from koroku_desktop.ui.chat.markdown_doc import style_code
from koroku_desktop.ui.quick_ask.answer_text import answer_markdown, remembered_line
from koroku_desktop.ui.quick_ask.placement import fit_inside, place_near, translucency_available
from koroku_desktop.ui.quick_ask.target_button import TargetButton
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.approval_stack import ApprovalStack
from koroku_desktop.ui.widgets.attachment_tray import AttachmentTray
from koroku_desktop.ui.widgets.chat_input import ChatInput
from koroku_desktop.ui.widgets.controls import note_label
from koroku_desktop.ui.widgets.icons import app_icon, tinted_icon
from koroku_desktop.ui.widgets.tasks import TaskSet

DEFAULT_SIZE = QSize(520, 360)
SIZE_KEY = "quick_ask/size"
Route = Callable[[], Awaitable[AgentBridge]]
"""Finds the bridge a question goes through (where the setting says it goes)."""


class QuickAskPopup(AttachmentDrops, QWidget):
    """Asks one question, streams the answer; Esc hides; focus loss hides unless pinned.

    Images pasted into its box (or files dropped on it, or `attach_bytes`) go with the question.
    """

    open_in_chat = Signal(int)  # seq of the exchange's user message (-1: unknown)
    screen_requested = Signal()  # the Screen button: hide, capture, come back with the PNG

    def __init__(
        self,
        bridge: AgentBridge,
        workspace: Path,
        settings: QSettings,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowFlags(
            Qt.WindowType.Tool
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
        )
        self.setWindowTitle("Koroku quick ask")
        self.setWindowIcon(app_icon())
        self.rounded = translucency_available()
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground, self.rounded)
        self._settings = settings
        self._bridge = bridge
        """The bridge of the exchange shown (its signals are followed)."""
        self.route: Route | None = None
        """Where a question goes (None: always `bridge`, the chat window's)."""
        self.exchange_conversation: str | None = None
        """The conversation the exchange shown went into (None: not asked yet)."""
        self._asking = TaskSet()
        self._sending = asyncio.Lock()
        self._turn_id: str | None = None
        """The turn this popup asked for: its events are recognised by this id."""
        self.active = False
        self.exchange_seq: int | None = None
        self._final = ""
        self._streamed = ""
        self._remembered = ""
        self._was_active = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        frame = QFrame()
        frame.setObjectName("PopupRoot")
        frame.setProperty("square", not self.rounded)
        outer.addWidget(frame)
        col = QVBoxLayout(frame)
        col.setContentsMargins(16, 12, 16, 8)
        col.setSpacing(8)
        col.addLayout(self._header())
        composer = QFrame()
        composer.setObjectName("Composer")
        box = QVBoxLayout(composer)
        box.setContentsMargins(12, 6, 12, 6)
        self.tray = AttachmentTray()
        box.addWidget(self.tray)
        self.input = ChatInput("Ask Koroku anything — Enter sends, Esc closes")
        self.input.submitted.connect(self.ask)
        self.input.escape_pressed.connect(self.hide)
        box.addWidget(self.input)
        col.addWidget(composer)
        self.question_label = note_label()
        self.question_label.setVisible(False)
        col.addWidget(self.question_label)
        self._workspace = workspace
        self._column = col
        self.approvals = ApprovalStack(bridge, workspace)
        """The approvals of the bridge in use (each bridge has its stack here)."""
        self._stacks = {bridge: self.approvals}
        col.addWidget(self.approvals)
        self.approvals.focus_after = self.input
        self.tool_label = QLabel()
        self.tool_label.setObjectName("Muted")
        self.tool_label.setVisible(False)
        col.addWidget(self.tool_label)
        self.answer = QTextBrowser()
        self.answer.setObjectName("Answer")
        self.answer.setOpenExternalLinks(True)
        self.answer.setPlaceholderText("The answer appears here.")
        col.addWidget(self.answer, 1)
        grip_row = QHBoxLayout()
        grip_row.addStretch(1)
        grip_row.addWidget(QSizeGrip(self), 0, Qt.AlignmentFlag.AlignRight)
        col.addLayout(grip_row)
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(40)
        self._render_timer.timeout.connect(self._render)
        size = settings.value(SIZE_KEY)
        self.resize(size if isinstance(size, QSize) and size.isValid() else DEFAULT_SIZE)
        self._follow(bridge, True)
        self.wire_attachments(self)

    def _follow(self, bridge: AgentBridge, on: bool) -> None:
        """Follow (or stop following) `bridge`'s signals for the exchange."""
        for signal, slot in (
            (bridge.turn_started, self._on_turn_started),
            (bridge.event_appended, self._on_event),
            (bridge.text_delta, self._on_delta),
            (bridge.tool_started, self._on_tool),
            (bridge.tool_finished, self._on_tool_done),
            (bridge.turn_finished, self._on_turn_finished),
            (bridge.waiting_changed, self._on_waiting),
            # Its turn goes on when the chat window shows another conversation meanwhile.
            (bridge.background_event, self._on_own_event),
            (bridge.background_turn_finished, self._on_turn_finished),
        ):
            if on:
                signal.connect(slot)
            else:
                signal.disconnect(slot)

    def add_bridge(self, bridge: AgentBridge) -> None:
        """Another bridge questions may go through (quick ask's own): its approvals are
        shown here, below the chat window's."""
        stack = self._stacks[bridge] = ApprovalStack(bridge, self._workspace)
        stack.focus_after = self.input
        self._column.insertWidget(self._column.indexOf(self.approvals) + 1, stack)

    def _use(self, bridge: AgentBridge) -> None:
        if bridge is not self._bridge:
            self._follow(self._bridge, False)
            self._bridge = bridge
            self._follow(bridge, True)
            self.approvals = self._stacks.get(bridge, self.approvals)

    def _header(self) -> QHBoxLayout:
        row = QHBoxLayout()
        icon = QLabel()
        icon.setPixmap(app_icon().pixmap(18, 18))
        row.addWidget(icon)
        title = QLabel("Quick ask")
        title.setObjectName("PopupTitle")
        row.addWidget(title)
        self.target = TargetButton()
        """Which conversation the question goes into; its menu changes it."""
        row.addWidget(self.target)
        row.addStretch(1)
        self.pin_button = QToolButton()
        self.pin_button.setText("Pin")
        self.pin_button.setCheckable(True)
        self.pin_button.setToolTip("Keep the popup open when it loses focus")
        row.addWidget(self.pin_button)
        self.screen_button = QToolButton()
        self.screen_button.setObjectName("ScreenButton")
        self.screen_button.setIcon(tinted_icon("screen", theme.current().muted))
        self.screen_button.setToolTip("Ask about the screen: capture it and attach the picture")
        self.screen_button.setAccessibleName("Capture the screen")
        self.screen_button.clicked.connect(self.screen_requested)
        row.addWidget(self.screen_button)
        self.open_button = QPushButton("Open in chat")
        self.open_button.clicked.connect(self._open_in_chat)
        row.addWidget(self.open_button)
        return row

    def show_conversation(self, title: str) -> None:
        """The chat window's conversation is now `title` (the target names it then)."""
        self.target.show_target(self.target.target, title)

    @property
    def pinned(self) -> bool:
        """Whether focus loss keeps the popup open."""
        return self.pin_button.isChecked()

    # -- showing -----------------------------------------------------------------------

    def popup(self) -> None:
        """Show near the cursor on the screen it is on, focus in the input."""
        pos = QCursor.pos()
        screen = QGuiApplication.screenAt(pos) or QGuiApplication.primaryScreen()
        self.move(place_near(pos, self.size(), screen.availableGeometry()))
        self._was_active = False
        self.show()
        self.raise_()
        self.activateWindow()
        self.input.setFocus(Qt.FocusReason.PopupFocusReason)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Esc hides."""
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
            return
        super().keyPressEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        """Hide when another window takes the focus, unless pinned."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange:
            if self.isActiveWindow():
                self._was_active = True
            QTimer.singleShot(0, self, self._maybe_hide)  # not after the popup is gone

    def _maybe_hide(self) -> None:
        # Once it had the focus, losing it (to our windows or any other app) hides it.
        if self.isVisible() and not self.pinned and not self.isActiveWindow() and self._was_active:
            self.hide()

    def keep_on_screen(self) -> None:
        """Move (and if need be shrink) the popup so all of it is on its screen."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        inside = fit_inside(self.geometry(), screen.availableGeometry())
        if inside != self.geometry():
            self.setGeometry(inside)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Remember the size for next time."""
        super().resizeEvent(event)
        if self.isVisible():
            self._settings.setValue(SIZE_KEY, event.size())
            QTimer.singleShot(0, self.keep_on_screen)  # grown by an approval card

    # -- the exchange ------------------------------------------------------------------

    def ask(self, text: str) -> None:
        """Send `text` where the target says and follow its answer here."""
        self.exchange_seq = None
        self.exchange_conversation = None
        self._final = ""
        self._streamed = ""
        self._remembered = ""
        self.tool_label.setVisible(False)
        attached = self.tray.take()
        files = ", ".join(p.name for p in attached)
        short = text if len(text) < 200 else text[:199] + "…"
        self.question_label.setText(f"You asked: {short}" + (f"  (with {files})" if files else ""))
        self.question_label.setVisible(True)
        self.answer.setMarkdown("…")
        self._turn_id = turn_id = new_id()
        self._asking.start(self._send(text, turn_id, attached))

    async def _send(self, text: str, turn_id: str, attached: list[PendingAttachment]) -> None:
        """Route and send, one question after another (in the order they were asked); a
        question asked meanwhile is still sent, only no longer followed here."""
        async with self._sending:
            try:
                bridge = self._bridge if self.route is None else await self.route()
            except DB_ERRORS as exc:  # a database that cannot be read or written now
                self.answer.setMarkdown(f"**Not asked:** “{text}” ({exc})")
                if not self.input.toPlainText().strip():
                    self.input.setPlainText(text)  # nothing typed is lost
                for pending in attached:
                    self.tray.add_pending(pending)
                return
            if turn_id == self._turn_id:
                self._use(bridge)
            bridge.send(text, turn_id, quick=True, attachments=attached)

    async def stop_asking(self) -> None:
        """Stop routing questions (on quit); one already sent is its bridge's to end."""
        await self._asking.cancel()

    def show_hint(self, text: str) -> None:
        """Why a pasted or dropped file was not attached, in the status line."""
        self.tool_label.setWordWrap(True)  # a long reason must not widen the popup
        self.tool_label.setText(f"⚠  {text}")
        self.tool_label.setVisible(True)

    def _on_waiting(self, text: str) -> None:
        if text and self._turn_id is not None and not self.active:
            self.tool_label.setText(f"◌  {text}…")
            self.tool_label.setVisible(True)
        elif not text and self.tool_label.text().startswith("◌"):
            # The other front end's turn ended (or it went away): no longer waiting for it.
            self.tool_label.clear()
            self.tool_label.setVisible(False)

    def _on_turn_started(self, text: str | None) -> None:
        if self._turn_id is not None and self._bridge.agent.current_turn_id == self._turn_id:
            self.active = True
            self.tool_label.setVisible(False)

    def _on_event(self, stored: StoredEvent) -> None:
        event = stored.event
        if not isinstance(event, MessageEvent):
            return
        mine = self._turn_id is not None and stored.turn_id == self._turn_id
        if event.is_user_turn:
            # Our message opens our exchange; anyone else's (another window) closes it.
            self.active = mine
            if mine:
                self.exchange_seq = stored.seq
                self.exchange_conversation = stored.conversation_id
                self._remembered = remembered_line(message_blocks(event))
                self._render_timer.start()
        elif self.active and mine and event.role == "model":
            text = answer_markdown(message_blocks(event))
            if text:
                self._final += ("\n\n" if self._final else "") + text
            self._streamed = ""
            self._render_timer.start()

    def _on_own_event(self, stored: StoredEvent) -> None:
        if self._turn_id is not None and stored.turn_id == self._turn_id:
            self._on_event(stored)

    def _on_delta(self, piece: str) -> None:
        if self.active:
            self._streamed += piece
            if not self._render_timer.isActive():
                self._render_timer.start()

    def _on_tool(self, call: FunctionCallPart) -> None:
        if self.active:
            self.tool_label.setText(f"◌  {call.name}  {short_args(call.args, 60)}")
            self.tool_label.setVisible(True)

    def _on_tool_done(self, call: FunctionCallPart, part: FunctionResponsePart) -> None:
        if self.active:
            glyph = mark(part.failed)
            self.tool_label.setText(f"{glyph}  {call.name}  {short_args(call.args, 60)}")

    def _on_turn_finished(self, result: TurnResult) -> None:
        if not self.active or result.turn_id != self._turn_id:
            return
        self.active = False
        self._streamed = ""
        if result.error is not None:
            self._final += f"\n\n**Error:** {result.error.message}"
        elif result.cancelled:
            self._final += "\n\n*Stopped.*"
        elif result.notice is not None:
            self._final += f"\n\n*⚠ {result.notice}*"
        self._render()

    def _render(self) -> None:
        text = self._final + (("\n\n" if self._final else "") + self._streamed)
        if self._remembered:
            text = f"{self._remembered}\n\n{text or '…'}"
        bar = self.answer.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.answer.setMarkdown(text or "…")
        style_code(self.answer.document(), theme.current(), copy_chips=False)  # lines wrap
        if at_end:
            bar.setValue(bar.maximum())

    def answer_text(self) -> str:
        """The answer shown (plain text)."""
        return self.answer.toPlainText()

    def _open_in_chat(self) -> None:
        self.hide()
        self.open_in_chat.emit(self.exchange_seq if self.exchange_seq is not None else -1)

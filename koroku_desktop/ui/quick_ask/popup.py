"""QuickAskPopup: a frameless, on-top box near the cursor that asks into the same conversation."""

from __future__ import annotations

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
from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.ids import new_id
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart
from koroku_desktop.render import blocks as b
from koroku_desktop.render.fold import message_blocks
from koroku_desktop.render.markdown import block_markdown
from koroku_desktop.render.text import mark, one_line, short_args
from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.file_drops import AttachmentDrops
from koroku_desktop.ui.chat.header import HeaderTitle
from koroku_desktop.ui.quick_ask.placement import fit_inside, place_near, translucency_available
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.approval_stack import ApprovalStack
from koroku_desktop.ui.widgets.attachment_tray import AttachmentTray
from koroku_desktop.ui.widgets.chat_input import ChatInput
from koroku_desktop.ui.widgets.icons import app_icon, tinted_icon

DEFAULT_SIZE = QSize(520, 360)
SIZE_KEY = "quick_ask/size"


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
        self.question_label = QLabel()
        self.question_label.setObjectName("Muted")
        self.question_label.setWordWrap(True)
        self.question_label.setVisible(False)
        col.addWidget(self.question_label)
        self.approvals = ApprovalStack(bridge, workspace)
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
        bridge.turn_started.connect(self._on_turn_started)
        bridge.event_appended.connect(self._on_event)
        bridge.text_delta.connect(self._on_delta)
        bridge.tool_started.connect(self._on_tool)
        bridge.tool_finished.connect(self._on_tool_done)
        bridge.turn_finished.connect(self._on_turn_finished)
        # Its turn goes on when the chat window shows another conversation meanwhile.
        bridge.background_event.connect(self._on_own_event)
        bridge.background_turn_finished.connect(self._on_turn_finished)
        bridge.waiting_changed.connect(self._on_waiting)
        self.wire_attachments(self)

    def _header(self) -> QHBoxLayout:
        row = QHBoxLayout()
        icon = QLabel()
        icon.setPixmap(app_icon().pixmap(18, 18))
        row.addWidget(icon)
        title = QLabel("Quick ask")
        title.setObjectName("PopupTitle")
        row.addWidget(title)
        self.conversation_label = HeaderTitle("", bold=False)
        """Which conversation the question goes into (the chat window's current one)."""
        self.conversation_label.setObjectName("Muted")
        row.addWidget(self.conversation_label, 1)
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
        """Say which conversation a question asked here goes into."""
        self.conversation_label.set_full(f"in {title}")

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
        """Send `text` into the shared conversation and follow its answer here."""
        self.exchange_seq = None
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
        self._turn_id = new_id()
        self._bridge.send(text, self._turn_id, quick=True, attachments=attached)

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
        if at_end:
            bar.setValue(bar.maximum())

    def answer_text(self) -> str:
        """The answer shown (plain text)."""
        return self.answer.toPlainText()

    def _open_in_chat(self) -> None:
        self.hide()
        self.open_in_chat.emit(self.exchange_seq if self.exchange_seq is not None else -1)


def answer_markdown(blocks: tuple[b.Block, ...]) -> str:
    """What the popup shows of a model content: its text (with citation marks), where it
    came from (the sources of a grounded answer) and why it stopped early, through the
    presentation fold; thoughts and tool calls stay in the chat."""
    shown = [x for x in blocks if isinstance(x, b.TextBlock | b.SourcesBlock | b.NoticeBlock)]
    return "\n\n".join(t for t in (block_markdown(x) for x in shown) if t)


def remembered_line(blocks: tuple[b.Block, ...]) -> str:
    """One muted line naming the past passages Koroku brought to this question (the chat
    shows them as chips), or ""."""
    passages = [p for x in blocks if isinstance(x, b.RememberedBlock) for p in x.passages]
    if not passages:
        return ""
    named = "; ".join(f"#{p.seq} ({p.when}): {one_line(p.text, 60)}" for p in passages[:3])
    more = f" and {len(passages) - 3} more" if len(passages) > 3 else ""
    return f"*Remembered: {named}{more}*"

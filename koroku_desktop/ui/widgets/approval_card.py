"""ApprovalCard: an inline (never modal) card asking whether a tool call may run."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest, ApprovalScope
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.button_flow import ButtonFlow
from koroku_desktop.ui.widgets.command_risk import destructive_reasons
from koroku_desktop.ui.widgets.controls import note_label
from koroku_desktop.ui.widgets.diff_preview import diff_html, file_diff
from koroku_desktop.ui.widgets.schedule_summary import schedule_summary
from koroku_desktop.ui.widgets.text_fit import fitting_height

TITLES = {
    "bash": "Koroku wants to run a shell command",
    "write_file": "Koroku wants to write a file",
    "edit_file": "Koroku wants to edit a file",
    "schedule": "Koroku wants to schedule a task that runs on its own",
}


def bash_folder(args: dict[str, Any], workspace: Path) -> Path:
    """The folder a bash call runs in: its `working_dir` (relative to the workspace), else the
    workspace (the same rule as the bash tool)."""
    folder = args.get("working_dir")
    if isinstance(folder, str) and folder:
        path = Path(folder).expanduser()
        return path if path.is_absolute() else workspace / path
    return workspace


def breakable_path(path: str) -> str:
    """`path` as HTML that may wrap after each `/` (a long folder reads whole in a narrow
    card instead of forcing it wider than the window)."""
    return html.escape(path).replace("/", "/\u200b")


def _mono() -> QFont:
    font = QFont(theme.current().mono)
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


class FittedEdit(QPlainTextEdit):
    """Monospace text that wraps and is as tall as its wrapped lines, up to `max_lines`
    (then it scrolls): a two-line command shows both lines at any width."""

    def __init__(self, text: str, max_lines: int) -> None:
        super().__init__(text)
        self.max_lines = max_lines
        self.setObjectName("Code")
        self.setFont(_mono())
        self.setTabChangesFocus(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.textChanged.connect(self.fit)
        self.fit()

    def fit(self) -> None:
        """Take the height of the wrapped text at this width (bounded)."""
        height, more = fitting_height(self, self.max_lines)
        self.setFixedHeight(height)
        policy = Qt.ScrollBarPolicy
        self.setVerticalScrollBarPolicy(
            policy.ScrollBarAsNeeded if more else policy.ScrollBarAlwaysOff
        )

    def event(self, event: QEvent) -> bool:
        """Re-fit once the style sheet (its padding) and the width are known."""
        handled = super().event(event)
        if event.type() in (QEvent.Type.Polish, QEvent.Type.Show, QEvent.Type.Resize):
            self.fit()
        return handled


class ApprovalCard(QFrame):
    """The tool, its full arguments (bash command editable, file changes as a diff), 4 answers.

    Keyboard: the card takes the focus itself (typing edits nothing); Tab moves to the
    command and between the buttons; Ctrl+Enter allows once; Esc denies.
    """

    answered = Signal(object)  # ApprovalDecision

    def __init__(
        self, request: ApprovalRequest, workspace: Path, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ApprovalCard")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the card itself answers keys
        self.request = request
        self._workspace = workspace
        self._done = False
        self._laid_width = 0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.setSpacing(8)
        default = f"Koroku wants to use the tool “{request.tool}”"
        if request.source:  # an MCP tool: name the server and the tool
            default = f"Koroku wants to use {request.source}"
        title = QLabel(TITLES.get(request.tool, default))
        title.setObjectName("ApprovalTitle")
        title.setWordWrap(True)  # an MCP tool's server, name and hints can be long
        layout.addWidget(title)
        # The card itself takes the focus: a screen reader says what it asks and how to answer.
        self.setAccessibleName(title.text())
        self.setAccessibleDescription(
            "Ctrl+Enter allows once, Esc denies; Tab reaches the details and the answers."
        )

        self.command_edit: QPlainTextEdit | None = None
        self.danger_reasons: list[str] = []
        self.diff_view: QTextBrowser | None = None
        if request.tool == "bash" and isinstance(request.args.get("command"), str):
            layout.addWidget(note_label("You can edit the command before it runs."))
            self.command_edit = FittedEdit(str(request.args["command"]), 6)
            self.command_edit.setObjectName("Code")
            self.command_edit.setFont(_mono())
            self.command_edit.setTabChangesFocus(True)
            layout.addWidget(self.command_edit)
            self.cwd = bash_folder(request.args, workspace)
            self.folder_label = note_label(f"in <code>{breakable_path(str(self.cwd))}</code>")
            self.folder_label.setToolTip("The folder the command runs in")
            layout.addWidget(self.folder_label)
            self.danger_label = QLabel()
            self.danger_label.setObjectName("DangerNote")
            self.danger_label.setWordWrap(True)
            layout.addWidget(self.danger_label)
            self.command_edit.textChanged.connect(self._assess)
            self._assess()
            rest = {k: v for k, v in request.args.items() if k != "command"}
            if rest:
                layout.addWidget(self._args_view(rest, 3))
        elif request.tool in ("write_file", "edit_file"):
            path = QLabel(f"<b>{breakable_path(str(request.args.get('path', '?')))}</b>")
            path.setWordWrap(True)
            path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(path)
            self.diff_view = QTextBrowser()
            self.diff_view.setObjectName("Code")
            self.diff_view.setFont(_mono())
            self.diff_view.setPlainText("Computing the change…")
            self.diff_view.setMinimumHeight(90)
            self.diff_view.setMaximumHeight(260)
            layout.addWidget(self.diff_view)
            self._diff_task = asyncio.ensure_future(self._load_diff())
        elif request.tool == "schedule":
            self.schedule_view = schedule_summary(dict(request.args))
            layout.addWidget(self.schedule_view)
        else:
            layout.addWidget(self._args_view(request.args, 12))

        # The schedule tool asks every time (a task runs unattended): no grant to offer.
        each_time = request.tool == "schedule"
        self.allow_once = self._button(
            "&Schedule it" if each_time else "&Allow once", "Primary", ("once", True)
        )
        self.allow_session = self._button("Allow for this &session", "", ("session", True))
        self.allow_always = self._button("Al&ways allow this tool", "", ("always", True))
        self._grants = () if each_time else (self.allow_session, self.allow_always)
        if each_time:
            self.allow_session.hide()
            self.allow_always.hide()
        self.deny = self._button("&Deny", "Danger", ("once", False))
        # One row while they fit (Deny apart at the right), else wrapped: the card's height
        # follows its width, and its minimum width is the widest button's.
        self.button_flow = ButtonFlow([self.allow_once, *self._grants, self.deny], last_apart=True)
        layout.addLayout(self.button_flow)
        for child in self.findChildren(QWidget):
            child.installEventFilter(self)

    def handle_key(self, event: QKeyEvent) -> bool:
        """Ctrl+Enter allows once, Esc denies; True when the key was an answer."""
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.allow_once.click()
            return True
        if event.key() == Qt.Key.Key_Escape:
            self.deny.click()
            return True
        return False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Route the card's keys from whichever child has the focus."""
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self.handle_key(event)
        return False

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """The card's keys when the card itself has the focus."""
        if not self.handle_key(event):
            super().keyPressEvent(event)

    def minimumSizeHint(self) -> QSize:
        """At least as tall as the card is at its width now (wrapped lines, rows of buttons):
        a box layout asks heightForWidth, but a window sized by its minimum (the quick-ask
        popup) asks only this, and must still give every line and button its room."""
        hint = super().minimumSizeHint()
        if self._laid_width > 0:
            hint.setHeight(max(hint.height(), self.heightForWidth(self._laid_width)))
        return hint

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A new width can wrap the lines and buttons into another height: say so."""
        super().resizeEvent(event)
        if event.size().width() != self._laid_width:
            self._laid_width = event.size().width()
            self.updateGeometry()

    def _args_view(self, args: dict[str, Any], max_lines: int) -> QPlainTextEdit:
        text = (
            "\n".join(
                f"{key}: {value if isinstance(value, str) else json.dumps(value, default=str)}"
                for key, value in args.items()
            )
            or "(no arguments)"
        )
        view = FittedEdit(text, max_lines)
        view.setReadOnly(True)
        return view

    async def _load_diff(self) -> None:
        diff = await asyncio.to_thread(
            file_diff, self.request.tool, dict(self.request.args), self._workspace
        )
        if self.diff_view is None:
            return
        th = theme.current()
        with contextlib.suppress(RuntimeError):  # the card was closed meanwhile
            self.diff_view.setHtml(diff_html(diff or "", th.success, th.danger, th.accent))

    def _button(self, label: str, name: str, answer: tuple[ApprovalScope, bool]) -> QPushButton:
        button = QPushButton(label)
        if name:
            button.setObjectName(name)
        button.setAutoDefault(True)
        button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        scope, allowed = answer
        button.clicked.connect(lambda: self._answer(allowed, scope))
        return button

    def decision(self, allowed: bool, scope: ApprovalScope = "once") -> ApprovalDecision:
        """The decision for an answer, with the edited command when it changed."""
        args = None
        if allowed and self.command_edit is not None:
            command = self.command_edit.toPlainText()
            if command != self.request.args.get("command"):
                args = {**self.request.args, "command": command}
        return ApprovalDecision(allowed=allowed, scope=scope if allowed else "once", args=args)

    def _answer(self, allowed: bool, scope: ApprovalScope) -> None:
        if self._done:
            return
        self._done = True
        self.answered.emit(self.decision(allowed, scope))

    def _assess(self) -> None:
        """Danger styling while the (possibly edited) command could destroy something."""
        if self.command_edit is None:
            return
        self.danger_reasons = destructive_reasons(self.command_edit.toPlainText(), self.cwd)
        danger = bool(self.danger_reasons)
        self.danger_label.setText("⚠ Careful: this command " + "; ".join(self.danger_reasons) + ".")
        self.danger_label.setVisible(danger)
        if self.property("danger") != danger:
            self.setProperty("danger", danger)
            self.style().unpolish(self)
            self.style().polish(self)

    def focus_default(self) -> None:
        """Put the keyboard focus on the card itself, where Ctrl+Enter allows once, Esc denies
        and Tab reaches the command and the buttons. Never straight into the command or onto
        a button: keys typed on as the card appears must not edit what will run, nor press
        Allow with a space."""
        self.setFocus(Qt.FocusReason.OtherFocusReason)

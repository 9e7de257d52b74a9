"""The composer's slash-command widgets: the list of MCP prompts under a typed `/`, and the
bar that asks for a chosen prompt's arguments inline.

Both are plain widgets in the composer (never popups that take the keyboard): the message
box keeps the focus while the list follows what is typed, and the bar's fields are reached
with Enter and Tab. What they do with a choice is `SlashCommands`' (ui/chat/slash_commands.py).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QStringListModel, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCompleter,
    QFormLayout,
    QFrame,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.app.runtime import McpPromptInfo, prompt_commands
from koroku_desktop.ui.widgets.two_line_delegate import TwoLineDelegate

SHOWN_ROWS = 5
ROLE = Qt.ItemDataRole.UserRole


class SlashList(QListWidget):
    """The prompts whose `/server:name` starts with what is typed, two lines each."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SlashList")
        self.setAccessibleName("MCP prompts")
        self.setItemDelegate(TwoLineDelegate(self, Qt.TextElideMode.ElideRight))
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the message box keeps the keyboard
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setUniformItemSizes(True)
        self.setVisible(False)

    def show_prompts(self, prompts: list[McpPromptInfo]) -> None:
        """List `prompts` (hidden when none), the first chosen."""
        self.clear()
        for prompt in prompts:
            args = prompt_commands.arguments_text(prompt)
            title = prompt_commands.command(prompt) + (f"  {args}" if args else "")
            item = QListWidgetItem(f"{title}\n{prompt.description or 'MCP prompt'}")
            item.setData(ROLE, prompt)
            item.setToolTip(prompt_commands.usage(prompt))
            self.addItem(item)
        if prompts:
            self.setCurrentRow(0)
            row = self.sizeHintForRow(0)
            self.setFixedHeight(row * min(SHOWN_ROWS, len(prompts)) + 2 * self.frameWidth())
        self.setVisible(bool(prompts))

    def chosen(self) -> McpPromptInfo | None:
        """The highlighted prompt."""
        item = self.currentItem()
        return item.data(ROLE) if item is not None and self.isVisible() else None

    def step(self, step: int) -> None:
        """Up or Down from the message box: move the highlight, wrapping around."""
        if self.count():
            self.setCurrentRow((self.currentRow() + step) % self.count())


class PromptArgsBar(QFrame):
    """A chosen prompt's arguments as fields (completed by its server); Enter sends."""

    send_requested = Signal(object, dict)  # the prompt, its arguments
    cancelled = Signal()
    edited = Signal(str, str)  # argument, text typed: ask the server for completions

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PromptArgs")
        col = QVBoxLayout(self)
        col.setContentsMargins(8, 6, 8, 6)
        col.setSpacing(4)
        self.title = QLabel()
        self.title.setObjectName("PromptArgsTitle")
        self.title.setWordWrap(True)
        col.addWidget(self.title)
        self.form = QFormLayout()
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        col.addLayout(self.form)
        self.hint = QLabel("Enter: next field, then send · Esc: cancel")
        self.hint.setObjectName("PromptArgsHint")
        self.hint.setWordWrap(True)
        col.addWidget(self.hint)
        self.prompt: McpPromptInfo | None = None
        self.fields: dict[str, QLineEdit] = {}
        self.setVisible(False)

    def ask(self, prompt: McpPromptInfo, known: dict[str, str]) -> None:
        """Show a field per argument, filled from `known`; the first empty required one
        takes the focus."""
        self.clear()
        self.prompt = prompt
        self.title.setText(f"{prompt_commands.command(prompt)} — {prompt.description}".strip(" —"))
        for name, required, about in prompt.arguments:
            field = QLineEdit(known.get(name, ""))
            field.setObjectName(f"PromptArg_{name}")
            field.setAccessibleName(name)
            field.setPlaceholderText(about if required else f"{about} (optional)".strip())
            completer = QCompleter(QStringListModel([], field), field)
            completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
            field.setCompleter(completer)
            field.textEdited.connect(lambda text, n=name: self.edited.emit(n, text))
            field.returnPressed.connect(lambda n=name: self._next(n))
            field.installEventFilter(self)
            self.fields[name] = field
            self.form.addRow(f"{name}:" if required else f"{name} (optional):", field)
            self.edited.emit(name, field.text())
        self.setVisible(True)
        gaps = prompt_commands.missing(prompt, self.values())
        first = self.fields.get(gaps[0]) if gaps else next(iter(self.fields.values()), None)
        if first is not None:
            first.setFocus()

    def values(self) -> dict[str, str]:
        """The arguments filled in so far (empty ones left out)."""
        return {n: f.text().strip() for n, f in self.fields.items() if f.text().strip()}

    def offer(self, name: str, options: list[str]) -> None:
        """Show the server's completions under `name`'s field."""
        field = self.fields.get(name)
        if field is None:
            return
        completer = field.completer()
        model = completer.model()
        if isinstance(model, QStringListModel):
            model.setStringList(options)
        if options and field.hasFocus() and field.text():
            completer.complete()

    def _next(self, name: str) -> None:
        if self.prompt is None:
            return
        names = list(self.fields)
        gaps = prompt_commands.missing(self.prompt, self.values())
        later = [n for n in names[names.index(name) + 1 :] if n in gaps]
        if gaps:
            self.fields[(later or gaps)[0]].setFocus()
        else:
            self.send_requested.emit(self.prompt, self.values())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc in a field cancels the command."""
        if (
            isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() == Qt.Key.Key_Escape
        ):
            self.cancelled.emit()
            return True
        return super().eventFilter(watched, event)

    def clear(self) -> None:
        """Drop the fields and hide."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields.clear()
        self.prompt = None
        self.setVisible(False)

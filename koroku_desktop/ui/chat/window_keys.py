"""WindowKeys: the chat window's own keys, beside the message box's and the find bar's.

A mixin for the chat window (it has the message box `input`, the `find_bar`, the `bridge`,
the `last_turn` actions and the `status_bar`): Ctrl+L puts the cursor in the message box,
Ctrl+F opens Find, Ctrl+/ or F1 the shortcut sheet (`ui/chat/shortcut_sheet.py`), and Esc in
the message box stops the running turn.
"""

from __future__ import annotations

from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

from koroku_desktop.ui.bridge import AgentBridge
from koroku_desktop.ui.chat.find_bar import FindBar
from koroku_desktop.ui.chat.last_turn import LastTurnActions
from koroku_desktop.ui.chat.shortcut_sheet import ShortcutSheet
from koroku_desktop.ui.chat.status_bar import ChatStatusBar
from koroku_desktop.ui.widgets.chat_input import ChatInput


class WindowKeys:
    """Binds the window's keys and shows the shortcut sheet (mixed into the QMainWindow)."""

    input: ChatInput
    find_bar: FindBar
    bridge: AgentBridge
    last_turn: LastTurnActions
    status_bar: ChatStatusBar

    def refocus_input(self) -> None:
        """Give the keyboard back to the message box (the window's own)."""
        raise NotImplementedError

    def bind_keys(self, window: QWidget) -> None:
        """Bind Ctrl+L, Find, Ctrl+/ and F1 on `window` (the window itself), and Esc."""
        self._keys_window = window
        focus = QShortcut(QKeySequence("Ctrl+L"), window)
        focus.activated.connect(self.input.setFocus)
        self.input.escape_pressed.connect(self.escape)
        find = QShortcut(QKeySequence(QKeySequence.StandardKey.Find), window)
        find.activated.connect(self.find_bar.open)
        for keys in ("Ctrl+/", "F1"):
            QShortcut(QKeySequence(keys), window).activated.connect(self.show_shortcuts)
        self.shortcut_sheet: ShortcutSheet | None = None

    def show_shortcuts(self) -> ShortcutSheet:
        """Open (or raise) the keyboard-shortcut sheet; the message box gets the keys back
        when it closes."""
        if self.shortcut_sheet is None:
            self.shortcut_sheet = ShortcutSheet(self._keys_window)
            self.shortcut_sheet.finished.connect(self.refocus_input)
        self.shortcut_sheet.show()
        self.shortcut_sheet.raise_()
        self.shortcut_sheet.activateWindow()
        return self.shortcut_sheet

    def escape(self) -> None:
        """Esc in the message box stops the running turn (a waiting approval takes its Esc
        first, as a denial; an edit being made is cancelled instead)."""
        if self.bridge.busy and self.last_turn.editing is None:
            self.bridge.cancel()
            self.status_bar.showMessage("Stopped", 2000)
        self.refocus_input()

"""The chat window's header: the title and icon buttons with tooltips (thoughts, a fresh
conversation, history & memory, settings) that fit down to 360 px."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.icons import tinted_icon

THOUGHTS_TIP = {
    False: "Show thoughts (each answer's can also be opened on its own)",
    True: "Hide thoughts",
}


class HeaderTitle(QLabel):
    """The current conversation's title (in bold unless told), elided to the room it has
    (whole in the tooltip when cut)."""

    def __init__(self, text: str, *, bold: bool = True) -> None:
        super().__init__()
        self.setObjectName("HeaderTitle")
        self.full = text
        self.bold = bold
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(40)
        self._fit()

    def set_full(self, text: str) -> None:
        """Show `text` (elided when the header is too narrow for it)."""
        self.full = text
        self._fit()

    def _fit(self) -> None:
        font = QFont(self.font())
        font.setBold(self.bold)
        self.setFont(font)
        room = max(self.contentsRect().width(), 40)
        shown = QFontMetrics(font).elidedText(self.full, Qt.TextElideMode.ElideRight, room)
        self.setText(shown)
        self.setToolTip(self.full if shown != self.full else "")

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Elide again for the new width."""
        super().resizeEvent(event)
        self._fit()


class ChatHeader(QWidget):
    """Title and the window's icon buttons; the thoughts button is a visible on/off toggle."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 8, 12, 4)
        row.setSpacing(2)
        self.sidebar_button = self._button("sidebar", "Conversations (Ctrl+B)")
        row.addWidget(self.sidebar_button)
        row.addSpacing(4)
        self.title = HeaderTitle("Koroku")
        row.addWidget(self.title, 1)
        self.thoughts_button = self._button("thoughts", THOUGHTS_TIP[False])
        self.thoughts_button.setCheckable(True)
        self.thoughts_button.toggled.connect(self._thoughts_toggled)
        self.clear_button = self._button("new-chat", "Clear conversation… (start afresh)")
        self.history_button = self._button("history", "History && memory")
        self.settings_button = self._button("settings", "Settings")
        self.shortcuts_button = self._button("keyboard", "Keyboard shortcuts (Ctrl+/)")
        for button in self.buttons()[1:]:
            row.addWidget(button)

    def _button(self, icon: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName("HeaderButton")
        button.setProperty("icon_name", icon)
        button.setToolTip(tip.replace("&&", "&"))
        button.setAccessibleName(tip.replace("&&", "&").split(" (")[0])
        button.setText(tip.split(" (")[0])
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        button.setIconSize(QSize(18, 18))
        button.setAutoRaise(True)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        self._paint_icon(button)
        return button

    def buttons(self) -> list[QToolButton]:
        """The header's buttons, left to right."""
        return [
            self.sidebar_button,
            self.thoughts_button,
            self.clear_button,
            self.history_button,
            self.settings_button,
            self.shortcuts_button,
        ]

    def _paint_icon(self, button: QToolButton) -> None:
        th = theme.current()
        name = str(button.property("icon_name"))
        on = button.isCheckable() and button.isChecked()
        if on:
            name += "-on"
        button.setIcon(tinted_icon(name, th.accent if on else th.muted))

    def _thoughts_toggled(self, on: bool) -> None:
        self.thoughts_button.setToolTip(THOUGHTS_TIP[on])
        self.thoughts_button.setText("Hide thoughts" if on else "Show thoughts")
        self.thoughts_button.setAccessibleName(self.thoughts_button.text())
        self._paint_icon(self.thoughts_button)

    def changeEvent(self, event: QEvent) -> None:
        """Repaint the icons in the new theme's colours."""
        if event.type() == QEvent.Type.PaletteChange:
            for button in self.buttons():
                self._paint_icon(button)
        super().changeEvent(event)

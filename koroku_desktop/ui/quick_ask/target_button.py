"""TargetButton: the popup's "→ Quick asks" / "→ <current title>": where a question asked
there goes, and a menu to send it to the other place (the setting `quick_ask_into`)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QActionGroup, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QMenu, QSizePolicy, QToolButton, QWidget

from koroku_desktop.domain.conversations import QUICK_ASKS_TITLE

TARGETS = ("quick_asks", "current")
"""The values of `Settings.quick_ask_into`."""
ARROW = "→ "
MENU_MARK = " ▾"
MIN_WIDTH = 70


class TargetButton(QToolButton):
    """Says where the next question goes; its menu switches it (`chosen`: the new target)."""

    chosen = Signal(str)  # "quick_asks" or "current"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("QuickAskTarget")
        self.setAutoRaise(True)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setStyleSheet("QToolButton::menu-indicator { image: none; width: 0px; }")
        self.target = "quick_asks"
        self.current_title = ""
        self.full = ""
        """The whole text (the button shows it elided to its room)."""
        menu = QMenu(self)
        group = QActionGroup(menu)
        self.own = menu.addAction(f"Into its own conversation, “{QUICK_ASKS_TITLE}”")
        self.chat = menu.addAction("Into the chat window's conversation")
        for action, target in ((self.own, "quick_asks"), (self.chat, "current")):
            action.setCheckable(True)
            group.addAction(action)
            action.triggered.connect(lambda _c=False, t=target: self._pick(t))
        self.setMenu(menu)
        self._show()

    def show_target(self, target: str, current_title: str | None = None) -> None:
        """Say `target` ("quick_asks" or "current"; `current_title` names the chat
        window's conversation)."""
        self.target = target if target in TARGETS else "quick_asks"
        if current_title is not None:
            self.current_title = current_title
        self._show()

    @property
    def title(self) -> str:
        """The conversation a question goes into, by title."""
        if self.target == "quick_asks":
            return QUICK_ASKS_TITLE
        return self.current_title or "the chat window's conversation"

    def _pick(self, target: str) -> None:
        if target != self.target:
            self.show_target(target)
            self.chosen.emit(target)

    def _show(self) -> None:
        self.own.setChecked(self.target == "quick_asks")
        self.chat.setChecked(self.target == "current")
        self.chat.setText(
            "Into the chat window's conversation"
            + (f", “{self.current_title}”" if self.current_title else "")
        )
        self.full = ARROW + self.title
        self.setToolTip(
            f"Questions asked here go into “{self.title}”. Click to change where they go."
        )
        self.setAccessibleName(f"Asks into {self.title}")
        self.updateGeometry()
        self._fit()

    def _chrome(self) -> int:
        """What the style adds around the text (padding, frame)."""
        shown = QFontMetrics(self.font()).horizontalAdvance(self.text())
        return max(super().sizeHint().width() - shown, 0)

    def sizeHint(self) -> QSize:
        """Room for the whole text (the layout gives less when the popup is narrow)."""
        hint = super().sizeHint()
        width = QFontMetrics(self.font()).horizontalAdvance(self.full + MENU_MARK)
        return QSize(width + self._chrome(), hint.height())

    def minimumSizeHint(self) -> QSize:
        """Narrow enough for the arrow and a few letters."""
        return QSize(MIN_WIDTH, super().minimumSizeHint().height())

    def _fit(self) -> None:
        fm = QFontMetrics(self.font())
        room = max(self.width() - self._chrome() - fm.horizontalAdvance(MENU_MARK), 20)
        self.setText(fm.elidedText(self.full, Qt.TextElideMode.ElideRight, room) + MENU_MARK)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Elide again for the new width."""
        super().resizeEvent(event)
        self._fit()

"""WheelGuard: the mouse wheel scrolls a form, never silently changes a drop-down under it.

Drop-downs, number boxes and sliders in a scrolled form take the wheel only once they have
the keyboard focus (clicked or tabbed to); before that the wheel scrolls the form.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QWidget,
)

GUARDED = (QComboBox, QAbstractSpinBox, QAbstractSlider)


class WheelGuard(QObject):
    """An event filter on a form's value widgets that passes an unfocused wheel to the form."""

    def __init__(self, root: QWidget) -> None:
        super().__init__(root)
        self.guard(root)

    def guard(self, root: QWidget) -> None:
        """Guard every value widget under `root` (call again for widgets added later)."""
        for widget in root.findChildren(QWidget):
            if isinstance(widget, GUARDED) and not isinstance(
                widget.parentWidget(), QAbstractScrollArea
            ):
                if widget.property("wheel_guarded"):
                    continue
                widget.setProperty("wheel_guarded", True)
                widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
                widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """An unfocused value widget's wheel goes to the scroll area around it."""
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget):
            return False
        if watched.hasFocus():
            return False
        area = watched.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            QCoreApplication.sendEvent(area.viewport(), event)
        return True

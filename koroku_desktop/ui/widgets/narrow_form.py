"""A form whose labels go above their fields when its box is narrow.

`QFormLayout.WrapLongRows` wraps a row only when its field's minimum width does not fit
beside the label; a line edit or a wrapping note always "fits", so at 400 px it was squeezed
to a few characters beside its label and its note was cut off. Below `NARROW` pixels every
row puts its label above its field instead, as a phone-width form does.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QFormLayout, QWidget

NARROW = 480  # the box's width under which labels go above their fields

_WRAP = QFormLayout.RowWrapPolicy


class _Follow(QObject):
    def __init__(self, box: QWidget, form: QFormLayout) -> None:
        super().__init__(box)
        self._form = form

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and isinstance(watched, QWidget):
            narrow = watched.width() < NARROW
            policy = _WRAP.WrapAllRows if narrow else _WRAP.WrapLongRows
            if self._form.rowWrapPolicy() != policy:
                self._form.setRowWrapPolicy(policy)
        return False


def narrow_form(box: QWidget) -> QFormLayout:
    """The form layout of `box`, its labels above its fields whenever `box` is narrow."""
    form = QFormLayout(box)
    form.setRowWrapPolicy(_WRAP.WrapLongRows)
    box.installEventFilter(_Follow(box, form))
    return form

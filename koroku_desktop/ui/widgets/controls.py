"""Small constructors for the controls panels build the same way: a push button wired to
its slot, a single-shot timer, a search field with a clear button, a muted note, a
frameless up-and-down scroll area; and a row of buttons that wraps when narrow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QWidget,
)

F = TypeVar("F", bound=QLineEdit)


def push_button(
    text: str, on_click: Callable[[], object], *, tip: str = "", name: str = ""
) -> QPushButton:
    """A button saying `text` that calls `on_click`; `tip` its tooltip, `name` its object
    name (the style sheet's, e.g. "Danger" or "Primary")."""
    button = QPushButton(text)
    if name:
        button.setObjectName(name)
    if tip:
        button.setToolTip(tip)
    button.clicked.connect(on_click)
    return button


def single_shot(parent: QObject, interval_ms: int, slot: Callable[[], object]) -> QTimer:
    """A single-shot timer owned by `parent` that calls `slot` `interval_ms` after each
    `start()` (a restart before then postpones it)."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(interval_ms)
    timer.timeout.connect(slot)
    return timer


def vertical_scroll(inner: QWidget) -> QScrollArea:
    """`inner` in a frameless scroll area that follows its width and scrolls up and down only
    (where the room is shorter than `inner` needs)."""
    scroll = QScrollArea()
    scroll.setWidget(inner)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return scroll


def search_field(field: F, name: str, placeholder: str, on_edit: Callable[[], object]) -> F:
    """`field` set up as a search box: its object name, placeholder, a clear button, and
    `on_edit` called on every change of its text."""
    field.setObjectName(name)
    field.setPlaceholderText(placeholder)
    field.setClearButtonEnabled(True)
    field.textChanged.connect(on_edit)
    return field


def note_label(text: str = "") -> QLabel:
    """A muted, word-wrapped line or paragraph: help under a setting, a status note."""
    label = QLabel(text)
    label.setObjectName("Muted")
    label.setWordWrap(True)
    return label


def place_buttons(grid: QGridLayout, buttons: Sequence[QWidget], per_row: int | None) -> None:
    """Lay `buttons` out in `grid` again: with `per_row` None in one row, the last one kept
    apart at the right edge (Delete, Deny); else `per_row` to a row, in order."""
    for button in buttons:
        grid.removeWidget(button)
    for column in range(grid.columnCount()):
        grid.setColumnStretch(column, 0)
    if per_row is None:
        *first, last = buttons
        for i, button in enumerate(first):
            grid.addWidget(button, 0, i)
        grid.setColumnStretch(len(first), 1)
        grid.addWidget(last, 0, len(first) + 1)
    else:
        for i, button in enumerate(buttons):
            grid.addWidget(button, i // per_row, i % per_row)

"""Generic checks on a shown window, as a person sees it: no visible text cut off, and no
widget drawn over another.

Every visible label, button, group, drop-down and text editor is asked how much room its text
needs at its width and compared with the room it got; a label elided by our code must really be
too narrow for its full text (kept in the tooltip). Widgets one layout places (a layout given
less room than its contents' minimum squeezes them over each other) must not overlap.
"""

from __future__ import annotations

import re
from itertools import combinations

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QComboBox,
    QGroupBox,
    QLabel,
    QLayout,
    QPlainTextEdit,
    QStackedLayout,
    QTextEdit,
    QToolButton,
    QWidget,
)

SLACK = 1
"""Pixels of rounding a widget may be short before its text counts as cut."""


def _name(widget: QWidget) -> str:
    text = ""
    if isinstance(widget, (QLabel, QAbstractButton)):
        text = widget.text()
    elif isinstance(widget, QGroupBox):
        text = widget.title()
    elif isinstance(widget, (QPlainTextEdit, QTextEdit)):
        text = widget.toPlainText()
    plain = re.sub(r"<[^>]+>", "", text).replace("\n", " ")
    short = plain if len(plain) <= 50 else plain[:47] + "..."
    return f"{type(widget).__name__}#{widget.objectName() or '-'} {short!r}"


def _in_scroll_viewport(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        grand = parent.parentWidget()
        if isinstance(grand, QAbstractScrollArea) and grand.viewport() is parent:
            return True
        parent = grand
    return False


def _shown(widget: QWidget) -> bool:
    return widget.isVisible() and widget.width() > 0 and widget.height() > 0


def widget_problem(widget: QWidget) -> str | None:
    """Why this widget's text does not read whole, or None."""
    width, height = widget.width(), widget.height()
    if isinstance(widget, QLabel):
        if not widget.text() or (widget.pixmap() is not None and not widget.pixmap().isNull()):
            return None
        if widget.wordWrap():
            need = widget.heightForWidth(width)
            if need > height + SLACK:
                return f"needs {need} px of height at {width} px wide, has {height}"
        else:
            hint = widget.sizeHint()
            if hint.width() > width + SLACK:
                return f"needs {hint.width()} px of width, has {width}"
            if hint.height() > height + SLACK:
                return f"needs {hint.height()} px of height, has {height}"
        tip = widget.toolTip()
        text = widget.text()
        if text.endswith("…") and tip and tip.startswith(text[:-1]) and tip != text:
            full = widget.fontMetrics().horizontalAdvance(tip)
            if full <= widget.contentsRect().width():
                return f"elided although its whole text ({full} px) fits in {width} px"
        return None
    if isinstance(widget, QAbstractButton):
        if not widget.text():
            return None
        if (
            isinstance(widget, QToolButton)
            and widget.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly
        ):
            return None
        hint = widget.sizeHint()
        if hint.width() > width + SLACK:
            return f"needs {hint.width()} px of width, has {width}"
        if hint.height() > height + SLACK:
            return f"needs {hint.height()} px of height, has {height}"
        return None
    if isinstance(widget, QGroupBox):
        title = widget.title()
        if re.search(r"(?<!&)&(?!&)", title):
            return "its title has a single '&', which Qt draws as an underlined mnemonic"
        need = widget.fontMetrics().horizontalAdvance(title.replace("&&", "&")) + 16
        if title and need > width + SLACK:
            return f"its title needs {need} px of width, has {width}"
        return None
    if isinstance(widget, QComboBox):
        need = widget.fontMetrics().horizontalAdvance(widget.currentText()) + 24
        if need > width + SLACK:
            return f"its current choice needs {need} px of width, has {width}"
        return None
    if isinstance(widget, (QPlainTextEdit, QTextEdit)):
        return _editor_problem(widget)
    return None


def _editor_problem(editor: QPlainTextEdit | QTextEdit) -> str | None:
    """Text hidden in an editor that shows no scroll bar for it."""
    off = Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    doc = editor.document()
    if isinstance(editor, QPlainTextEdit):
        need = 2 * doc.documentMargin()
        block = doc.begin()
        while block.isValid():
            need += editor.blockBoundingRect(block).height()
            block = block.next()
    else:
        need = doc.size().height()
    placeholder = editor.placeholderText()
    if not editor.toPlainText() and placeholder:
        # The placeholder wraps like the text: cut when its lines need more than the box has.
        margin = 2 * doc.documentMargin()
        room = max(1.0, editor.viewport().width() - margin)
        wide = editor.fontMetrics().horizontalAdvance(placeholder)
        lines = -(-wide // room)
        tall = lines * editor.fontMetrics().lineSpacing() + margin
        if tall > editor.viewport().height() + SLACK:
            return (
                f"its placeholder needs {int(lines)} lines ({int(tall)} px) at "
                f"{editor.viewport().width()} px, the box shows {editor.viewport().height()}"
            )
    room = editor.viewport().height()
    if need > room + SLACK and editor.verticalScrollBarPolicy() == off:
        return f"needs {int(need)} px for its text, shows {room} (and no scroll bar)"
    hbar = editor.horizontalScrollBar()
    if hbar.maximum() > 0 and editor.horizontalScrollBarPolicy() == off:
        return f"{hbar.maximum()} px of its text hidden to the right (and no scroll bar)"
    return None


def _texty(widget: QWidget) -> bool:
    return isinstance(
        widget, (QLabel, QAbstractButton, QGroupBox, QComboBox, QPlainTextEdit, QTextEdit)
    )


def cut_by_parent(widget: QWidget) -> str | None:
    """A text widget partly outside its window or parent (outside scroll areas), or None."""
    if _in_scroll_viewport(widget) or isinstance(widget, QAbstractScrollArea):
        return None
    parent = widget.parentWidget()
    if parent is None:
        return None
    inside = parent.rect()
    geometry: QRect = widget.geometry()
    if not inside.contains(geometry):
        return f"reaches outside its parent ({geometry.getRect()} in {inside.getRect()})"
    return None


def _laid_out(layout: QLayout) -> list[QWidget]:
    """The widgets `layout` and its nested layouts place (a stacked layout's pages left out:
    they lie on each other by design, one shown at a time)."""
    if isinstance(layout, QStackedLayout):
        return []
    found: list[QWidget] = []
    for index in range(layout.count()):
        item = layout.itemAt(index)
        if (widget := item.widget()) is not None:
            found.append(widget)
        elif (inner := item.layout()) is not None:
            found.extend(_laid_out(inner))
    return found


def overlapping(top: QWidget) -> list[str]:
    """Every pair of visible widgets placed by one layout that lie over each other."""
    problems: list[str] = []
    for widget in [top, *top.findChildren(QWidget)]:
        layout = widget.layout()
        if layout is None or not _shown(widget):
            continue
        placed = [w for w in _laid_out(layout) if _shown(w)]
        for one, other in combinations(placed, 2):
            shared = one.geometry().intersected(other.geometry())
            if shared.width() > SLACK and shared.height() > SLACK:
                problems.append(
                    f"{_name(one)} and {_name(other)} overlap by "
                    f"{shared.width()}x{shared.height()} px"
                )
    return problems


def clipped_texts(top: QWidget) -> list[str]:
    """Every visible text widget in `top` that does not read whole, described (one drawn over
    another included)."""
    problems: list[str] = []
    for widget in [top, *top.findChildren(QWidget)]:
        if not _shown(widget) or not _texty(widget):
            continue
        problem = widget_problem(widget) or cut_by_parent(widget)
        if problem is not None:
            problems.append(f"{_name(widget)}: {problem}")
    return problems + overlapping(top)

"""Markdown documents of chat messages: code blocks styled, their Copy-button geometry cached."""

from __future__ import annotations

import weakref

from PySide6.QtCore import QRect
from PySide6.QtGui import (
    QFont,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)

from koroku_desktop.ui.widgets import theme

CHIP_W, CHIP_H = 54, 20
CHIP_ROOM = CHIP_W + 8
"""A code block's Copy chip and the room its first line leaves for it on the right."""


def copy_chip(code: QRect, first_line_h: float) -> QRect:
    """Where the Copy chip of a code block at `code` goes: at the right of its first line
    (which wraps before it), no taller than that line, so it covers no code."""
    height = min(CHIP_H, int(first_line_h))
    top = code.top() + (int(first_line_h) - height) // 2
    return QRect(code.right() - CHIP_W - 4, top, CHIP_W, height)


def blocks_chip(doc: QTextDocument, first: QTextBlock, last: QTextBlock) -> QRect:
    """`copy_chip` of the code that runs from block `first` to block `last` of `doc` (laid
    out), in document coordinates; `first` leaves `CHIP_ROOM` on its right for it."""
    layout = doc.documentLayout()
    code = layout.blockBoundingRect(first).united(layout.blockBoundingRect(last)).toRect()
    lines = first.layout()
    return copy_chip(code, lines.lineAt(0).height() if lines.lineCount() else CHIP_H)


def _find_code_groups(doc: QTextDocument) -> list[tuple[QRect, str]]:
    """The Copy chip's rect (in document coordinates) and the text of each fenced code block."""
    groups: list[tuple[QRect, str]] = []
    block = doc.begin()
    current: list[QTextBlock] = []

    def flush() -> None:
        if current:
            chip = blocks_chip(doc, current[0], current[-1])
            groups.append((chip, "\n".join(b.text() for b in current)))
            current.clear()

    while block.isValid():
        if block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence):
            current.append(block)
        else:
            flush()
        block = block.next()
    flush()
    return groups


_CODE_GROUPS: weakref.WeakKeyDictionary[QTextDocument, list[tuple[QRect, str]]] = (
    weakref.WeakKeyDictionary()
)


def code_groups(doc: QTextDocument) -> list[tuple[QRect, str]]:
    """`_find_code_groups`, once per laid-out document (paint asks for it on every frame)."""
    groups = _CODE_GROUPS.get(doc)
    if groups is None:
        groups = _CODE_GROUPS[doc] = _find_code_groups(doc)
    return groups


def forget_code_groups(doc: QTextDocument) -> None:
    """Forget the cached code blocks of a document that changed (a streaming answer)."""
    _CODE_GROUPS.pop(doc, None)


def style_code(
    doc: QTextDocument, th: theme.Theme, from_position: int = 0, *, copy_chips: bool = True
) -> None:
    """Give fenced code blocks a monospace font, a tinted background and lines that wrap at
    the column, inline code too
    (from the block at `from_position` on: a streaming answer styles only what it appended;
    `copy_chips`: each block's first line leaves room for its Copy chip)."""
    cursor = QTextCursor(doc)
    mono = QFont(th.mono)
    mono.setStyleHint(QFont.StyleHint.Monospace)
    block = doc.findBlock(from_position) if from_position else doc.begin()
    before = block.previous()
    previous_code = before.isValid() and before.blockFormat().hasProperty(
        QTextFormat.Property.BlockCodeFence
    )
    while block.isValid():
        is_code = block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence)
        nxt = block.next()
        next_code = nxt.isValid() and nxt.blockFormat().hasProperty(
            QTextFormat.Property.BlockCodeFence
        )
        spacing = QTextBlockFormat()
        if is_code:
            spacing.setTopMargin(0 if previous_code else 8)
            spacing.setBottomMargin(0 if next_code else 8)
        elif block.textList() is None:
            spacing.setBottomMargin(6)
        cursor.setPosition(block.position())
        cursor.mergeBlockFormat(spacing)
        opens = is_code and not previous_code
        previous_code = is_code
        if is_code:
            cursor.setPosition(block.position())
            fmt = QTextBlockFormat()
            fmt.setBackground(th.color("code_bg"))
            fmt.setLeftMargin(8)
            # The first line of a block leaves room for the Copy chip: it covered code.
            fmt.setRightMargin(8 + CHIP_ROOM if opens and copy_chips else 8)
            # A long line wraps inside the column: in a narrow window it was cut off at the
            # right edge (the view does not scroll sideways), its Copy chip with it.
            fmt.setNonBreakableLines(False)
            cursor.mergeBlockFormat(fmt)
            cursor.select(QTextCursor.SelectionType.BlockUnderCursor)
            ch = QTextCharFormat()
            ch.setFontFamilies([th.mono])
            cursor.mergeCharFormat(ch)
        else:
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                if frag.isValid() and frag.charFormat().fontFixedPitch():
                    cursor.setPosition(frag.position())
                    cursor.setPosition(
                        frag.position() + frag.length(), QTextCursor.MoveMode.KeepAnchor
                    )
                    ch = QTextCharFormat()
                    ch.setBackground(th.color("code_bg"))
                    ch.setFontFamilies([th.mono])
                    cursor.mergeCharFormat(ch)
                it += 1
        block = block.next()

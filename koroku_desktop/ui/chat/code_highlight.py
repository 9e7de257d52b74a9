"""Syntax highlighting of fenced code blocks in chat documents with Pygments, in colours
chosen for the light and the dark theme. Only blocks whose fence names a language Pygments
knows are coloured (guessing is slow and often wrong); a streaming answer is coloured once it
is complete, so typesetting stays cheap while it grows."""

from __future__ import annotations

from functools import cache
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import Comment, Keyword, Name, Number, Operator, String, Token
from pygments.util import ClassNotFound
from PySide6.QtGui import (
    QColor,
    QTextBlock,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)

from koroku_desktop.ui.widgets.theme import Theme

MAX_HIGHLIGHT = 60_000
"""Longer code blocks stay plain (lexing them would stall the window)."""

# token type -> (light colour, dark colour, bold)
_COLOURS: tuple[tuple[Any, str, str, bool], ...] = (
    (Comment, "#6A737D", "#8B949E", False),
    (Keyword, "#CF222E", "#FF7B72", True),
    (Name.Builtin, "#8250DF", "#D2A8FF", False),
    (Name.Function, "#6639BA", "#D2A8FF", False),
    (Name.Class, "#953800", "#FFA657", True),
    (Name.Decorator, "#953800", "#FFA657", False),
    (String, "#0A3069", "#A5D6FF", False),
    (Number, "#0550AE", "#79C0FF", False),
    (Operator.Word, "#CF222E", "#FF7B72", True),
    (Name.Tag, "#116329", "#7EE787", False),
    (Name.Attribute, "#0550AE", "#79C0FF", False),
)


@cache
def _lexer(language: str) -> Lexer | None:
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _format_for(token: Any, dark: bool) -> QTextCharFormat | None:
    for kind, light_colour, dark_colour, bold in _COLOURS:
        if token in kind:
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(dark_colour if dark else light_colour))
            if bold:
                fmt.setFontWeight(600)
            return fmt
    return None


def _language_of(block: QTextBlock) -> str | None:
    """The fence language of a code block (None: not a code block)."""
    fmt = block.blockFormat()
    if not fmt.hasProperty(QTextFormat.Property.BlockCodeFence):
        return None
    return fmt.stringProperty(QTextFormat.Property.BlockCodeLanguage)


def _fences(doc: QTextDocument) -> list[tuple[int, str, str]]:
    """(start position, language, text) of each fenced code block."""
    out: list[tuple[int, str, str]] = []
    block = doc.begin()
    while block.isValid():
        language = _language_of(block)
        if language is not None:
            start = block.position()
            lines = []
            while block.isValid() and _language_of(block) == language:
                lines.append(block.text())
                block = block.next()
            out.append((start, language.strip().lower(), "\n".join(lines)))
            continue
        block = block.next()
    return out


def highlight_code(doc: QTextDocument, th: Theme) -> int:
    """Colour the fenced code blocks of `doc` that name a known language; returns how many."""
    done = 0
    cursor = QTextCursor(doc)
    formats: dict[Any, QTextCharFormat | None] = {}
    for start, language, text in _fences(doc):
        lexer = _lexer(language) if language else None
        if lexer is None or len(text) > MAX_HIGHLIGHT:
            continue
        offset = 0
        for token, value in lexer.get_tokens(text):
            if token not in formats:
                formats[token] = _format_for(token, th.dark) if token is not Token.Text else None
            fmt = formats[token]
            if fmt is not None and value.strip():
                cursor.setPosition(start + offset)
                cursor.setPosition(start + offset + len(value), QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeCharFormat(fmt)
            offset += len(value)
        done += 1
    return done

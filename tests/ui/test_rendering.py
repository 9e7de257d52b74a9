"""Markdown rendering of messages: code blocks styled, and no reference leak that crashes Python."""

from __future__ import annotations

import sys

from PySide6.QtGui import QTextDocument
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.chat.markdown_doc import style_code
from koroku_desktop.ui.widgets import theme

MARKDOWN = "Some **text**.\n\n- a list item\n- another\n\n```python\nprint(1)\n```\n\nThe end."


def test_styling_many_documents_does_not_leak_references_to_none(qtbot: QtBot) -> None:
    # PySide6 6.12.0 on Python 3.11 returned None without a reference from every void method
    # (and textList()); painting messages then freed None and killed the interpreter.
    th = theme.current()
    doc = QTextDocument()
    doc.setMarkdown(MARKDOWN)
    before = sys.getrefcount(None)
    for _ in range(3000):
        style_code(doc, th)
    assert sys.getrefcount(None) - before > -500


def test_code_blocks_get_the_monospace_font(qtbot: QtBot) -> None:
    th = theme.current()
    doc = QTextDocument()
    doc.setMarkdown(MARKDOWN)
    style_code(doc, th)
    code = doc.findBlock(doc.toPlainText().index("print(1)"))
    assert th.mono in code.charFormat().fontFamilies()

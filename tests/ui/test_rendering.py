"""Markdown rendering of messages: code blocks styled in the current theme, no reference leak."""

from __future__ import annotations

import sys
from typing import get_args

from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.ui.chat.conversation_view import ConversationView
from koroku_desktop.ui.chat.items import ItemKind
from koroku_desktop.ui.chat.markdown_doc import style_code
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.chat.painters import PAINTERS
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


def _pixels(image: QImage, color: str) -> int:
    """How many pixels of `image` have exactly `color` (#RRGGBB)."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB32)
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return bytes(rgb.constBits()).count(bytes((b, g, r, 0xFF)))


def test_a_theme_switch_repaints_cached_code_blocks_in_the_new_colours(
    qapp: QApplication, qtbot: QtBot
) -> None:
    model = MessageModel()
    view = ConversationView(model)
    qtbot.addWidget(view)
    view.resize(700, 400)
    answer = MessageEvent(role="model", parts=[TextPart(text=MARKDOWN)])
    model.set_entries([StoredEvent(seq=1, conversation_id="c", created_at=0.0, event=answer)])
    try:
        theme.apply(qapp, "light")
        view.show()
        qtbot.waitExposed(view)
        assert _pixels(view.grab().toImage(), theme.LIGHT.code_bg) > 0
        theme.apply(qapp, "dark")
        dark = view.grab().toImage()
        assert _pixels(dark, theme.DARK.code_bg) > 0
        assert _pixels(dark, theme.LIGHT.code_bg) == 0
    finally:
        theme.apply(qapp, "light")


def test_every_row_kind_has_a_painter() -> None:
    assert set(PAINTERS) == set(get_args(ItemKind))


def test_a_long_answer_scrolled_half_out_of_view_still_paints_what_is_visible(
    qapp: QApplication, qtbot: QtBot
) -> None:
    """Documents are drawn clipped to the painted area: the visible middle of an answer taller
    than the view must still show, in the view and in a grab of it."""
    model = MessageModel()
    view = ConversationView(model)
    qtbot.addWidget(view)
    view.resize(700, 300)
    lines = "\n\n".join(f"```\nline {n} of a long answer\n```" for n in range(120))
    answer = MessageEvent(role="model", parts=[TextPart(text=lines)])
    model.set_entries([StoredEvent(seq=1, conversation_id="c", created_at=0.0, event=answer)])
    theme.apply(qapp, "light")
    view.show()
    qtbot.waitExposed(view)
    bar = view.verticalScrollBar()
    view.viewport().repaint()  # measures the answer exactly; the view then lays it out again
    qtbot.waitUntil(lambda: len(view.delegate._exact) == 1)
    measured = view.delegate.sizeHint(QStyleOptionViewItem(), model.index(0)).height()
    qtbot.waitUntil(lambda: bar.maximum() + view.viewport().height() == measured)
    assert bar.maximum() > 1_000
    for value in (0, bar.maximum() // 2, bar.maximum()):
        bar.setValue(value)
        qapp.processEvents()
        image = view.viewport().grab().toImage()
        half = image.copy(0, image.height() // 4, image.width(), image.height() // 2)
        assert _pixels(half, theme.LIGHT.code_bg) > 1_000, f"nothing painted at {value}"

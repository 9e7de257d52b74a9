"""Code blocks are coloured with Pygments in both themes; the person's bubbles render Markdown."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, QRectF
from PySide6.QtGui import QColor, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, TextPart
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.code_highlight import highlight_code
from koroku_desktop.ui.chat.conversation_view import ConversationView
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.markdown_doc import code_groups
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.chat.row_painting import Row
from koroku_desktop.ui.chat.text_painters import ModelPainter, UserPainter
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import texts, type_and_send
from tests.ui.screenshots import save_screenshot, save_variants

CODE = (
    "Try this:\n\n```python\ndef size(path):\n    return 42  # bytes\n```\n\n"
    "and\n\n```\nplain\n```\n"
)


def _colour_at(doc: QTextDocument, word: str) -> str:
    pos = doc.toPlainText().index(word)
    cursor = QTextCursor(doc)
    cursor.setPosition(pos + 1)
    return cursor.charFormat().foreground().color().name()


def test_known_languages_are_coloured_per_theme(qapp: QApplication) -> None:
    colours = {}
    for mode in ("light", "dark"):
        th = theme.apply(qapp, mode)
        doc = QTextDocument()
        doc.setMarkdown(CODE)
        assert highlight_code(doc, th) == 1, "only the fence that names a language"
        colours[mode] = (_colour_at(doc, "def"), _colour_at(doc, "42"), _colour_at(doc, "plain"))
        keyword, number, plain = colours[mode]
        assert keyword != plain and number != plain and keyword != number
    assert colours["light"][0] != colours["dark"][0]
    theme.apply(qapp, "light")


def test_user_bubbles_show_what_was_typed(qapp: QApplication) -> None:
    """The person's own text is not Markdown: every character and line break as typed, in
    the bubble's one colour (no white-on-white code, no invisible link)."""
    doc = QTextDocument()
    typed = "make it **bold**, see https://x.org\nsecond line `code`\n\n```python\nx = 1\n```"
    UserPainter().fill(doc, ChatItem(kind="user", text=typed), theme.current())
    assert doc.toPlainText() == typed
    block, formats = doc.begin(), set()
    while block.isValid():
        for fmt in block.layout().formats():
            formats.add(fmt.format.foreground().color().name())
        block = block.next()
    assert formats == set(), "no span is coloured apart from the bubble's text"


def test_a_coded_answer_in_the_window(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, qapp: QApplication
) -> None:
    window = desktop.window
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    fake_gemini.reply_text(CODE)
    type_and_send(qtbot, window.input, "how do I get **a size** in `python`?")
    qtbot.waitUntil(
        lambda: any("def size" in t for t in texts(window.model, "model")), timeout=10000
    )
    save_variants(qapp, window, "chat-code")


def _glyphs(doc: QTextDocument, *, code_only: bool = False) -> list[QRectF]:
    """Where the text of each line of `doc` (of its code blocks only) is, in its coordinates
    (a pixel less at the top and bottom: lines touch)."""
    block, glyphs = doc.begin(), []
    while block.isValid():
        if not code_only or block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence):
            origin = block.layout().position()
            for i in range(block.layout().lineCount()):
                line = block.layout().lineAt(i)
                glyphs.append(
                    QRectF(line.x(), line.y(), line.naturalTextWidth(), line.height())
                    .translated(origin)
                    .adjusted(0, 1, 0, -1)
                )
        block = block.next()
    return glyphs


def test_the_copy_chip_covers_no_code(qapp: QApplication) -> None:
    """A code block's first line wraps before its Copy chip, and the chip is no taller than
    that line: it covered the end of a long first line and the top of the second."""
    th = theme.apply(qapp, "light")
    text = "Hi\n\n```python\n" + "print('word', 42) " * 12 + "\nx = 1\ny = 2\n```\n"
    for width in (300, 560, 1200):
        doc = QTextDocument()
        ModelPainter().fill(doc, ChatItem(kind="model", text=text), th)
        doc.setTextWidth(width)
        ((chip, _code),) = code_groups(doc)
        glyphs = _glyphs(doc, code_only=True)
        assert len(glyphs) > 3
        covered = [g for g in glyphs if QRectF(chip).intersects(g)]
        assert covered == [], f"at {width} px the Copy chip {chip} covers code {covered}"


def test_the_copy_chip_of_a_tool_card_covers_no_code(
    qapp: QApplication, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An opened tool card's Copy chip, like a code block's, sits at the right of the first
    line, which wraps before it: it covered the end of a long line and the top of the next."""
    command = "grep -rn 'needle' " + " ".join(f"src/module_{n}/file.py" for n in range(12))
    call = FunctionCallPart(name="bash", args={"command": command}, id="c1")
    output = "\n".join(f"src/module_{n}/file.py:{n}: needle = {n} * 42  # found" for n in range(6))
    result = FunctionResponsePart(name="bash", id="c1", response={"output": output})
    events = [
        MessageEvent(role="user", origin="person", parts=[TextPart(text="find the needle")]),
        MessageEvent(role="model", origin="model", parts=[call]),
        MessageEvent(role="user", origin="tools", parts=[result]),
    ]
    model = MessageModel()
    model.set_entries([StoredEvent(n + 1, "c", 0.0, e) for n, e in enumerate(events)])
    (card,) = [i for i in model.items() if i.kind == "tool"]
    model.toggle_expanded(model.row_of(card))
    drawn: list[tuple[QTextDocument, QPoint]] = []
    chips: list[QRect] = []
    paint_doc, chip = Row.paint_doc, Row.chip

    def record_doc(row: Row, doc: QTextDocument, at: QPoint, color: QColor) -> None:
        if row.item is card:
            drawn.append((doc, at))
        paint_doc(row, doc, at, color)

    def record_chip(row: Row, rect: QRect, label: str, action: str) -> None:
        if row.item is card and label == "Copy":
            chips.append(rect)
        chip(row, rect, label, action)

    monkeypatch.setattr(Row, "paint_doc", record_doc)
    monkeypatch.setattr(Row, "chip", record_chip)
    theme.apply(qapp, "light")
    view = ConversationView(model)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    for width in (400, 900, 1600):
        view.resize(width, 600)
        qapp.processEvents()
        drawn.clear()
        chips.clear()
        view.viewport().repaint()
        save_screenshot(view, f"tool-card-copy-{width}")
        assert drawn and len(chips) == len(drawn), f"at {width} px the card is not painted"
        (doc, at), copy = drawn[-1], chips[-1]
        glyphs = [g.translated(at) for g in _glyphs(doc)]
        assert len(glyphs) > 4
        covered = [g for g in glyphs if QRectF(copy).intersects(g)]
        assert covered == [], f"at {width} px the Copy chip {copy} covers code {covered}"

"""Code blocks are coloured with Pygments in both themes; the person's bubbles render Markdown."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.code_highlight import highlight_code
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.text_painters import UserPainter
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import texts, type_and_send
from tests.ui.screenshots import save_variants

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

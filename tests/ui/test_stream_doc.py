"""A streaming answer's document grows incrementally and reads like the whole Markdown."""

from __future__ import annotations

import itertools

from PySide6.QtGui import QFont, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QApplication

from koroku_desktop.ui.chat.stream_doc import CURSOR, STEP_CHARS, StreamingDocs, complete_prefix
from koroku_desktop.ui.widgets import theme

ANSWER = (
    "# Plan\n\nFirst paragraph with **bold**.\n\n```python\ndef f():\n\n    return 1\n```\n\n"
    "- one\n- two\n\nLast words still coming"
)


def test_complete_prefix_ends_after_a_blank_line_outside_fences() -> None:
    assert complete_prefix("no blank yet") == 0
    assert complete_prefix("para\n\nnext") == len("para\n\n")
    inside = "```\ncode\n\nmore"
    assert complete_prefix(inside) == 0, "a blank line inside a fence does not end a paragraph"
    assert complete_prefix("a\n\nb\n\nc", start=3) == len("a\n\nb\n\n")


def test_growing_document_matches_the_whole_markdown(qapp: QApplication) -> None:
    th = theme.current()
    docs = StreamingDocs()
    shown = None
    for end in range(1, len(ANSWER) + 1, 7):
        doc = docs.document(1, ANSWER[:end], 600, QFont(), th)
        assert shown is None or doc is shown, "one document, grown in place"
        shown = doc
    final = docs.document(1, ANSWER, 600, QFont(), th)
    whole = QTextDocument()
    whole.setMarkdown(ANSWER)
    grown = final.toPlainText().removesuffix(CURSOR.strip()).split()
    assert grown == whole.toPlainText().split()
    assert final.blockCount() >= whole.blockCount() - 1
    # Narrower: laid out afresh.
    assert docs.document(1, ANSWER, 300, QFont(), th) is not final


def test_the_stored_answer_adopts_the_streamed_document(qapp: QApplication) -> None:
    th = theme.current()
    docs = StreamingDocs()
    streamed = docs.document(7, ANSWER[:-5], 600, QFont(), th)
    final = docs.adopt(ANSWER, 600, th)
    assert final is streamed, "not typeset again from scratch"
    assert CURSOR.strip() not in final.toPlainText()
    whole = QTextDocument()
    whole.setMarkdown(ANSWER)
    assert final.toPlainText().split() == whole.toPlainText().split()
    assert docs.adopt(ANSWER, 600, th) is None, "adopted once"
    docs.document(8, ANSWER[:20], 600, QFont(), th)
    assert docs.adopt("something else entirely\n\n", 600, th) is None


def test_a_burst_is_typeset_a_bounded_piece_per_frame(qapp: QApplication) -> None:
    """Much text at once (a slow frame): each call typesets at most STEP_CHARS of it and
    says it is behind, until the document shows it all."""
    th = theme.current()
    docs = StreamingDocs()
    paragraph = "A paragraph of the long answer with **bold** words.\n\n"
    burst = paragraph * (3 * STEP_CHARS // len(paragraph))
    docs.document(3, paragraph, 600, QFont(), th)
    seen: list[int] = []
    while True:
        doc = docs.document(3, burst, 600, QFont(), th)
        seen.append(len(doc.toPlainText()))
        if not docs.behind:
            break
        assert len(seen) < 10, "it catches up"
    assert len(seen) >= 3, "the burst took several frames"
    assert all(b - a <= STEP_CHARS for a, b in itertools.pairwise(seen))
    whole = QTextDocument()
    whole.setMarkdown(burst)
    assert doc.toPlainText().removesuffix(CURSOR.strip()).split() == whole.toPlainText().split()


def test_an_answer_stored_far_ahead_of_the_typesetting_is_finished_over_several_calls(
    qapp: QApplication,
) -> None:
    th = theme.current()
    docs = StreamingDocs()
    paragraph = "Words of a fast answer with `code` in them.\n\n"
    answer = paragraph * (3 * STEP_CHARS // len(paragraph)) + "```python\nprint(1)\n```"
    streamed = docs.document(5, paragraph, 600, QFont(), th)
    calls = 0
    while True:
        final = docs.adopt(answer, 600, th)
        calls += 1
        assert final is streamed, "the streamed document is finished, not typeset afresh"
        if not docs.behind:
            break
        assert calls < 10
    assert calls >= 3
    whole = QTextDocument()
    whole.setMarkdown(answer)
    assert final.toPlainText().split() == whole.toPlainText().split()
    assert docs.adopt(answer, 600, th) is None, "adopted once"


def test_a_paragraph_streamed_after_a_code_block_is_not_code(qapp: QApplication) -> None:
    """The text after a fenced block, typeset in a later piece, inherited the block's code
    format (monospace on the code background), and kept it once the answer was stored."""
    th = theme.current()
    code = "Try:\n\n```python\nprint('hi')\n```\n\n"
    after = "And the link: https://example.org/x\n\nDone."
    docs = StreamingDocs()
    docs.document(3, code, 600, QFont(), th)
    docs.document(3, code + after[:20], 600, QFont(), th)
    final = docs.adopt(code + after, 600, th)
    assert final is not None
    fenced = QTextFormat.Property.BlockCodeFence
    block, prose = final.begin(), {}
    while block.isValid():
        if block.text().strip():
            prose[block.text()] = block.blockFormat().hasProperty(fenced)
        block = block.next()
    assert prose == {
        "Try:": False,
        "print('hi')": True,
        "And the link: https://example.org/x": False,
        "Done.": False,
    }
    cursor = QTextCursor(final.findBlock(final.toPlainText().index("Done.")))
    cursor.movePosition(QTextCursor.MoveOperation.Right)
    assert not cursor.charFormat().fontFixedPitch()
    assert th.mono not in (cursor.charFormat().fontFamilies() or [])

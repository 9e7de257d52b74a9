"""The growing document of a streaming answer, typeset incrementally.

Setting the whole Markdown again on every piece costs time in the answer's length (a 40,000
character answer stalls the loop for one full typesetting each time). Here the answer is kept
in one document per streaming item: paragraphs that are complete (ended by a blank line outside
a code fence) are appended once as Markdown and never typeset again, and only the unfinished
tail is replaced on each piece. The final answer, once stored, is rendered whole as usual.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QFont, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument

from koroku_desktop.ui.chat.code_highlight import highlight_code
from koroku_desktop.ui.chat.markdown_doc import forget_code_groups, style_code
from koroku_desktop.ui.widgets.theme import Theme

CURSOR = " ▍"
STEP_CHARS = 3000
"""At most this much newly complete text is typeset per frame while streaming."""


def complete_prefix(text: str, start: int = 0) -> int:
    """The end of the last complete paragraph of `text` (after a blank line outside a code
    fence), at least `start`; `start` when none ends after it.

    `start` must itself end a complete paragraph (or be 0): only the text after it is read,
    so each streamed piece costs its own length, not the answer's.
    """
    fenced = False
    end = start
    pos = start
    for line in text[start:].splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        pos += len(line)
        if not fenced and not stripped and pos > end and line.endswith("\n"):
            end = pos
    return end


@dataclass
class _Stream:
    doc: QTextDocument
    width: int
    theme: Theme
    committed: str
    tail_at: int

    def reopen(self) -> QTextCursor:
        """A cursor after the committed text, the provisional tail after it removed."""
        cursor = QTextCursor(self.doc)
        cursor.setPosition(self.tail_at)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        return cursor

    def commit(self, cursor: QTextCursor, text: str, end: int) -> None:
        """Typeset `text` up to `end` for good (what follows it stays provisional)."""
        _append(self.doc, cursor, text[len(self.committed) : end], self.theme)
        self.committed = text[:end]
        self.tail_at = self.doc.characterCount() - 1


def _append(doc: QTextDocument, cursor: QTextCursor, markdown: str, th: Theme) -> None:
    cursor.movePosition(QTextCursor.MoveOperation.End)
    first = cursor.position()
    if doc.characterCount() > 1:
        # A plain block: one after a code block inherited its code format (monospace, the
        # code background, the fence) and kept it when the answer was stored.
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        first = cursor.position()
    cursor.insertMarkdown(markdown)
    style_code(doc, th, from_position=first)


class StreamingDocs:
    """One incrementally typeset document per streaming item (the newest only)."""

    def __init__(self) -> None:
        self._streams: dict[int, _Stream] = {}
        self.behind = False
        """The last `document` showed less than its text (a burst): build it again soon."""

    def document(self, uid: int, text: str, width: int, font: QFont, th: Theme) -> QTextDocument:
        """The document of streaming item `uid` now showing `text` (typeset to `width`)."""
        state = self._streams.get(uid)
        if (
            state is None
            or state.width != width
            or state.theme is not th
            or not text.startswith(state.committed)
        ):
            doc = QTextDocument()
            doc.setDocumentMargin(0)
            doc.setDefaultFont(font)
            doc.setTextWidth(width)
            state = _Stream(doc, width, th, "", 0)
            self._streams = {uid: state}
        doc = state.doc
        cursor = state.reopen()
        start = len(state.committed)
        end = complete_prefix(text, start)
        # A burst (a slow frame let much text pile up): typeset a bounded piece now and the
        # rest on the next repaints, so no frame's work grows with the burst.
        capped = complete_prefix(text[: start + STEP_CHARS], start)
        self.behind = end - start > STEP_CHARS and capped > start
        if self.behind:
            end = capped
        if end > len(state.committed):
            state.commit(cursor, text, end)
        tail = "" if self.behind else text[end:]
        _append(doc, cursor, (tail.strip("\n") or "") + CURSOR, th)
        forget_code_groups(doc)
        return doc

    def adopt(self, text: str, width: int, th: Theme) -> QTextDocument | None:
        """The streamed document finished as the stored answer `text`, when it showed the
        same answer at the same width and theme (the cursor dropped, code coloured), so the
        stored answer is not typeset again from scratch; None otherwise.

        When the stream ended far ahead of what was typeset, the rest is added at most
        `STEP_CHARS` a call (`behind` says so) and the document is finished by a later call.
        """
        self.behind = False
        for uid, state in list(self._streams.items()):
            if state.width != width or state.theme is not th:
                continue
            if not state.committed or not text.startswith(state.committed):
                continue
            doc = state.doc
            cursor = state.reopen()
            start = len(state.committed)
            capped = complete_prefix(text[: start + STEP_CHARS], start)
            self.behind = len(text) - start > STEP_CHARS and capped > start
            if self.behind:
                state.commit(cursor, text, capped)
                return doc
            tail = text[start:].strip("\n")
            if tail:
                _append(doc, cursor, tail, th)
            highlight_code(doc, th)
            forget_code_groups(doc)
            del self._streams[uid]
            return doc
        return None

    def forget(self, uid: int) -> None:
        """Drop the document of an item that stopped streaming."""
        self._streams.pop(uid, None)

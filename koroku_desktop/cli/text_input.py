"""Text from the terminal that is not valid Unicode: decoded with replacement characters.

Bytes that are not UTF-8 on stdin, or in arguments (Python keeps those as lone surrogates),
would otherwise fail later, when the text is stored or sent, with a traceback. They become
U+FFFD instead, and stderr says so once.
"""

from __future__ import annotations

import sys

REPLACEMENT_NOTE = (
    "koroku: the input had bytes that are not valid UTF-8; they were replaced with \ufffd"
)


def repaired(text: str) -> tuple[str, bool]:
    """`text` made encodable as UTF-8 (surrogate-escaped bytes decoded with replacement)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text, False
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace"), True


def argument_text(words: list[str]) -> str:
    """Words from the command line joined, repaired, with a note on stderr if needed."""
    text, changed = repaired(" ".join(words))
    if changed:
        print(REPLACEMENT_NOTE, file=sys.stderr)
    return text


def stdin_text() -> str:
    """All of stdin as text: UTF-8, invalid bytes replaced (with a note on stderr)."""
    raw = sys.stdin.buffer.read()
    text = raw.decode("utf-8", "replace")
    if "\ufffd" in text and "\ufffd".encode() not in raw:
        print(REPLACEMENT_NOTE, file=sys.stderr)
    return text

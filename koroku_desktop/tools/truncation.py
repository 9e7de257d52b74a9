"""Keeping tool output within what is worth sending to the model, with a visible marker."""

from __future__ import annotations


def truncate_head(text: str, limit: int, total: int | None = None, unit: str = "characters") -> str:
    """The first `limit` characters of `text`, followed by a marker when anything was cut.

    `total` is the full size when it is larger than `text` itself (e.g. a file read in part).
    """
    size = len(text) if total is None else total
    if len(text) <= limit and size <= len(text):
        return text
    shown = min(limit, len(text))
    return f"{text[:shown]}\n[... truncated: showing {shown} of {size} {unit} ...]"


def truncate_middle(text: str, limit: int) -> str:
    """The head and tail of `text` around a marker, when it is longer than `limit` characters.

    Command output keeps its end because errors and summaries usually come last.
    """
    if len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail
    return (
        f"{text[:head]}\n[... truncated: showing the first {head} and last {tail} "
        f"of {len(text)} characters ...]\n{text[-tail:]}"
    )


class CappedBuffer:
    """Collects a byte stream while holding at most a head and a tail of it in memory.

    A command that prints gigabytes costs a bounded amount of memory; what it printed in
    between is counted, not kept.
    """

    def __init__(self, head_bytes: int, tail_bytes: int) -> None:
        self._head = bytearray()
        self._tail = bytearray()
        self._head_cap = head_bytes
        self._tail_cap = tail_bytes
        self.total_bytes = 0
        self.dropped_bytes = 0

    def feed(self, chunk: bytes) -> None:
        """Add the next piece of the stream."""
        self.total_bytes += len(chunk)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail += chunk
        excess = len(self._tail) - self._tail_cap
        if excess > 0:
            del self._tail[:excess]
            self.dropped_bytes += excess

    def text(self, limit: int) -> str:
        """The collected output decoded, at most `limit` characters plus a marker."""
        if not self.dropped_bytes:
            return truncate_middle(
                bytes(self._head + self._tail).decode("utf-8", errors="replace"), limit
            )
        tail_chars = limit // 4
        head_chars = limit - tail_chars
        head = self._head.decode("utf-8", errors="replace")[:head_chars]
        tail = self._tail.decode("utf-8", errors="replace")[-tail_chars:]
        return (
            f"{head}\n[... truncated: showing the first {len(head)} and last {len(tail)} "
            f"characters of {self.total_bytes} bytes ...]\n{tail}"
        )

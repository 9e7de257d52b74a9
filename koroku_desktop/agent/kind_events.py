"""Reading the events of one kind across every conversation, and keeping up with them: what
the registries folded from the log (conversations, tasks) read. Blocking: off the loop."""

from __future__ import annotations

import threading

from koroku_desktop.agent.ports import LogReader
from koroku_desktop.domain.events import StoredEvent

PAGE = 2000


def kind_events(log: LogReader, kind: str, after_seq: int = 0) -> list[StoredEvent]:
    """The `kind` events after `after_seq`, in seq order, page by page (damaged rows left
    out). Blocking."""
    found: list[StoredEvent] = []
    while True:
        page = log.entries(None, after_seq=after_seq, limit=PAGE, kinds=(kind,))
        if page:
            after_seq = page[-1].seq
        found.extend(e for e in page if isinstance(e, StoredEvent))
        if len(page) < PAGE:
            return found


class KindFollower:
    """Every `kind` event of a log so far: each call reads only what is new. Thread-safe."""

    def __init__(self, log: LogReader, kind: str) -> None:
        self.log = log
        self.kind = kind
        self._events: list[StoredEvent] = []
        self._after = 0
        self._lock = threading.Lock()

    def read(self) -> list[StoredEvent]:
        """All of them, as the log stands now (a copy)."""
        with self._lock:
            new = kind_events(self.log, self.kind, self._after)
            if new:
                self._after = new[-1].seq
                self._events.extend(new)
            return list(self._events)

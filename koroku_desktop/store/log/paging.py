"""The `entries` call every log implementation shares: the arguments once, as an `EntryQuery`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from koroku_desktop.domain.events import LogEntry
from koroku_desktop.domain.queries import EntryQuery


class PagedLog(ABC):
    """A log that reads pages of its entries; the implementation supplies `_page`."""

    def entries(
        self,
        conversation_id: str | None = None,
        *,
        before_seq: int | None = None,
        after_seq: int | None = None,
        limit: int = 500,
        newest_first: bool = False,
        kinds: Sequence[str] | None = None,
    ) -> list[LogEntry]:
        """A page of the log in entries' order (newest first if asked), damaged rows included."""
        query = EntryQuery(conversation_id, before_seq, after_seq, limit, newest_first, kinds)
        return [] if query.empty else self._page(query)

    @abstractmethod
    def _page(self, query: EntryQuery) -> list[LogEntry]:
        """The entries `query` asks for (it is never `empty`)."""

"""One `koroku search` process's log and search, opened without the full runtime.

In the composition root so that the terminal front end reaches the store only through app/;
it imports the log and the recall wiring, never the agent loop, MCP or sync (a cold start of
a few hundred milliseconds).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from koroku_desktop.agent.conversations import read_titles, title_of
from koroku_desktop.agent.recall import HybridSearch, RecallResult
from koroku_desktop.domain.errors import StorageError
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.domain.recall import MemoryMatch, RecallHit
from koroku_desktop.store.db_errors import DB_ERRORS as DB_ERRORS
from koroku_desktop.store.db_errors import explain as explain
from koroku_desktop.store.log.event_log import SqliteEventLog


@dataclass
class Searcher:
    """The log and its search, opened for one `koroku search` process."""

    log: SqliteEventLog
    search: HybridSearch
    _titles: dict[str, str] | None = None

    def titles(self) -> dict[str, str]:
        """The conversations' titles, read once (a hit says where it comes from)."""
        if self._titles is None:
            self._titles = read_titles(self.log)
        return self._titles

    async def run(self, query: str, limit: int, mode: str) -> tuple[list[dict[str, Any]], Any]:
        """The records of one query and (results, note, memory) for the text output."""
        if mode == "all-words":
            hits = await asyncio.to_thread(self.log.search, query, limit)
            return self.records_of_hits(hits), RecallResult([], "keyword")
        result = await self.search.search(query, limit, keyword_only=mode == "keyword")
        return self.records(result.hits) + [memory_json(m) for m in result.memory], result

    def records(self, hits: list[RecallHit]) -> list[dict[str, Any]]:
        """Hybrid or BM25 hits as JSON records (full text, ids, scores)."""
        texts = self.log.vectors.texts([h.hit.seq for h in hits])
        titles = self.titles()
        return [
            hit_json(
                h.hit,
                texts.get(h.hit.seq),
                score=h.score,
                keyword=h.keyword_rank,
                sim=h.similarity,
                title=title_of(titles, h.hit.conversation_id),
            )
            for h in hits
        ]

    def records_of_hits(self, hits: list[SearchHit]) -> list[dict[str, Any]]:
        """All-words hits (newest first) as JSON records."""
        texts = self.log.vectors.texts([h.seq for h in hits])
        titles = self.titles()
        return [
            hit_json(h, texts.get(h.seq), title=title_of(titles, h.conversation_id)) for h in hits
        ]


def hit_json(
    hit: SearchHit,
    text: tuple[str, str, str] | None,
    *,
    score: float | None = None,
    keyword: int | None = None,
    sim: float | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    """One hit as JSON: ids (and its conversation's title), full text, the snippet
    (`[[`/`]]` around matches), and how it was found (fused score, keyword rank, cosine
    similarity; null when not by that leg)."""
    full, turn_id, event_id = text or (hit.snippet, "", "")
    return {
        "seq": hit.seq,
        "date": datetime.fromtimestamp(hit.created_at).isoformat(timespec="seconds"),
        "conversation_id": hit.conversation_id,
        "conversation_title": title,
        "turn_id": turn_id,
        "event_id": event_id,
        "kind": hit.kind,
        "role": hit.role,
        "text": full,
        "snippet": hit.snippet,
        "score": None if score is None else round(score, 6),
        "keyword_rank": keyword,
        "similarity": None if sim is None else round(sim, 4),
    }


def memory_json(match: MemoryMatch) -> dict[str, Any]:
    """A memory-file piece as JSON (`source: memory`; event hits have a `seq` instead)."""
    return {
        "source": "memory",
        "file": f"memory/{match.file}",
        "text": match.text,
        "snippet": match.text,
        "similarity": round(match.similarity, 4),
    }


@contextmanager
def open_searcher() -> Iterator[Searcher]:
    """Settings, the log (read-only when the data dir cannot be written) and the search;
    `SystemExit`-free: errors come out as `SearchUnavailable` with one line to print."""
    from koroku_desktop.app.config import SettingsError, default_paths, resolve_api_key
    from koroku_desktop.app.recall_wiring import build_recall
    from koroku_desktop.app.settings_store import SettingsStore
    from koroku_desktop.domain.ids import writer_name
    from koroku_desktop.store.db_errors import DatabaseUnavailable, open_event_log

    paths = default_paths()
    try:
        settings = SettingsStore.open(paths).effective
        log = open_event_log(paths.db, read_only=True, writer=writer_name("search"))
    except (SettingsError, DatabaseUnavailable) as exc:
        raise SearchUnavailable(str(exc), 2 if isinstance(exc, SettingsError) else 1) from None
    keys: list[Any] = []

    def api_key() -> Any:
        if not keys:
            keys.append(resolve_api_key())
        return keys[0]

    search, background = build_recall(log, api_key, settings.embedding_model, paths.memory)
    try:
        yield Searcher(log, search)
    finally:
        background.cancel()
        log.close()


class SearchUnavailable(StorageError):
    """The settings or the log cannot be opened: print the message, exit with `code`."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code

"""Wiring of recall by meaning: the lazy Gemini embedder, the hybrid search, the background
embedder and the `recall` tool's search over them (used by `runtime.py`).

The embedder imports google.genai on first use, like the chat model, so nothing here slows
start-up; with no API key there is no embedder and every search is keyword-only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from koroku_desktop.agent.conversations import read_titles, title_of
from koroku_desktop.agent.embedding import BackgroundEmbedder
from koroku_desktop.agent.memories import live_seqs
from koroku_desktop.agent.ports import Embedder
from koroku_desktop.agent.recall import HybridSearch
from koroku_desktop.app.config import ApiKey
from koroku_desktop.domain.json_value import JsonObject, JsonValue
from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.domain.recall import EmbeddingStatus, MemoryMatch, RecallHit
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.vectors.memory import MemoryVectors
from koroku_desktop.store.vectors.store import INDEX_FOLDER
from koroku_desktop.tools.base import RecallSearch

if TYPE_CHECKING:  # the agent loop is heavy to import; `koroku search` does without it
    from koroku_desktop.agent.loop import Agent
    from koroku_desktop.llm.embeddings import ClientSource

EMBEDDING_DIMENSIONS = 768
"""See llm/embeddings.py DEFAULT_DIMENSIONS for why 768."""


class LazyGeminiEmbedder:
    """An `Embedder` that imports google.genai and builds its client on first use."""

    def __init__(
        self, api_key: Callable[[], ApiKey | None], model: str, client: ClientSource | None = None
    ) -> None:
        """`client`: the chat model's SDK client to send through (None: one of its own)."""
        self._api_key = api_key
        self._client = client
        self.model = model
        self.dimensions = EMBEDDING_DIMENSIONS
        self._real: Embedder | None = None
        self._key_used: str | None = None

    def _embedder(self) -> Embedder:
        key = self._api_key()
        if key is None:
            raise ModelError("auth", "No Gemini API key is set.")
        if self._real is None or self._key_used != key.value or self._real.model != self.model:
            from koroku_desktop.llm.embeddings import GeminiEmbedder

            self._real = GeminiEmbedder(
                key.value, model=self.model, dimensions=self.dimensions, client=self._client
            )
            self._key_used = key.value
        return self._real

    def connect(self) -> None:
        """Build the SDK client now (on the loop's thread, like the chat model's) rather than
        at the first query, in the middle of a turn."""
        if self._api_key() is not None:
            connect = getattr(self._embedder(), "connect", None)
            if connect is not None:
                connect()

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """See `Embedder.embed_documents`."""
        return await self._embedder().embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        """See `Embedder.embed_query`."""
        return await self._embedder().embed_query(text)


def search_record(hit: SearchHit) -> JsonObject:
    """One full-text hit as the recall tools give it to the model: where and when, by whom."""
    return {
        "seq": hit.seq,
        "date": datetime.fromtimestamp(hit.created_at).strftime("%Y-%m-%d %H:%M"),
        "kind": hit.kind,
        "role": hit.role,
        "snippet": hit.snippet,
    }


def hit_record(hit: RecallHit, in_context: bool) -> JsonObject:
    """One hybrid-search hit as the `recall` tool returns it."""
    found_by: list[JsonValue] = [
        name
        for name, present in (("keywords", hit.keyword_rank), ("meaning", hit.similarity))
        if present is not None
    ]
    record: JsonObject = {**search_record(hit.hit), "found_by": found_by}
    if in_context:
        record["already_in_context"] = True
    return record


def memory_record(match: MemoryMatch) -> JsonObject:
    """A memory-file piece found by meaning, as the `recall` tool returns it."""
    return {
        "source": "memory",
        "file": match.file,
        "text": match.text,
        "found_by": ["meaning"],
    }


def recall_tool_search(search: HybridSearch, agent: Agent) -> RecallSearch:
    """The `recall` tool's search: hybrid, without the running turn's own events, and marking
    results the model already has in its live context."""

    async def run(query: str, limit: int) -> list[JsonObject]:
        result = await search.search(query, limit, below_seq=agent.turn_from_seq)
        live = live_seqs(agent.view)
        records = [hit_record(h, h.hit.seq in live) for h in result.hits]
        titles = await asyncio.to_thread(read_titles, agent.log)
        if titles:  # several conversations: each hit says which one it comes from
            for record, h in zip(records, result.hits, strict=True):
                record["conversation"] = title_of(titles, h.hit.conversation_id)
                record["conversation_id"] = h.hit.conversation_id
        return records + [memory_record(m) for m in result.memory]

    return run


def build_recall(
    event_log: SqliteEventLog,
    api_key: Callable[[], ApiKey | None],
    model: str,
    memory_dir: Path | None = None,
    client: ClientSource | None = None,
) -> tuple[HybridSearch, BackgroundEmbedder]:
    """The hybrid search (keyword-only while there is no key) and the background embedder;
    with `memory_dir`, the memory files are embedded and searched too; with `client`, the
    embeddings go through that SDK client (the chat model's) instead of one of their own."""
    embedder = LazyGeminiEmbedder(api_key, model, client)
    memory = None
    if memory_dir is not None:
        memory = MemoryVectors(memory_dir, event_log.path.parent / INDEX_FOLDER)
    search = HybridSearch(event_log.vectors, embedder, memory=memory)
    background = BackgroundEmbedder(event_log.vectors, embedder, memory=memory)

    async def catch_up() -> int:
        return 0 if api_key() is None else await background.before_search()

    search.catch_up = catch_up
    return search, background


def progress_text(status: EmbeddingStatus, last_error: str | None) -> str:
    """How far search by meaning has got, for a person ('' when everything is embedded)."""
    if status.complete:
        return ""
    total = status.last_seq or 1
    share = min(100, round(100 * status.done_seq / total))
    text = (
        f"Search by meaning covers {share}% of the log so far; "
        f"{status.pending_events:,} events are still being embedded."
    )
    return text + (f" Paused: {last_error}" if last_error else "")


def recall_search(event_log: SqliteEventLog) -> RecallSearch:
    """The `recall` tool's search over the whole log, run off the event loop."""

    async def search(query: str, limit: int) -> list[JsonObject]:
        hits = await asyncio.to_thread(event_log.search, query, limit)
        return [search_record(h) for h in hits]

    return search

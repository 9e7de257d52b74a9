"""The small protocols the agent talks through; composition roots fill them with adapters."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from koroku_desktop.domain.conversations import Activity
from koroku_desktop.domain.events import Event, LogEntry, MessageEvent, StoredEvent
from koroku_desktop.domain.json_value import JsonObject
from koroku_desktop.domain.lease import LockHolder
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.queries import LiveLoad, SearchHit
from koroku_desktop.domain.recall import (
    EmbeddingBatch,
    EmbeddingStatus,
    MemoryChunk,
    MemoryMatch,
    VectorMatch,
)


class LogReader(Protocol):
    """Reading the whole log: paging and full-text search (what the history viewer needs)."""

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
        """A page of the whole log, damaged rows included, for history views and export."""
        ...

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Full-text search over every event ever written, newest first."""
        ...

    def summarised_in(self, event_ids: Sequence[str]) -> dict[str, int]:
        """For those of these messages a compaction summarised (by id): the seq of the first
        such compaction. Seqs say nothing across devices; ids do."""
        ...

    def summary_span(self, compaction_id: str) -> tuple[int, int, int] | None:
        """How many of the messages here a compaction covered by id, and the lowest and
        highest of their seqs (None when it names none that are here)."""
        ...


class EventLog(LogReader, Protocol):
    """The append-only event log, shared by every process (and later device) that writes."""

    def append(
        self, conversation_id: str, events: Sequence[Event], *, turn_id: str | None = None
    ) -> list[StoredEvent]:
        """Write events atomically, each with a new event id and `turn_id`; return them."""
        ...

    def load_live(self, conversation_id: str, tail_limit: int | None = None) -> LiveLoad:
        """The latest boundary (compaction/cleared) and the events the live context needs.

        With `tail_limit`, at most that many of the newest (`LiveLoad.unloaded` says which
        were left out); an implementation may ignore it and load everything.
        """
        ...

    def data_version(self) -> int:
        """Changes whenever anyone commits to the log: a follower's cheap 'anything new?'."""
        ...


class ConversationLog(EventLog, Protocol):
    """An event log that can say what it holds of each conversation (the registry's)."""

    def conversation_activity(self, *, counts: bool = True) -> dict[str, Activity]:
        """Message count (with `counts`) and last activity of every conversation. Blocking."""
        ...


class TurnLock(Protocol):
    """A per-conversation writer lease that holds across processes (and later machines).

    A turn (and a clear or a manual compaction) runs from its user message to its final
    answer under the lease; the holder keeps it alive with a heartbeat, and a dead holder's
    lease expires, so a crash never blocks the next turn for long.
    """

    def try_acquire(self, conversation_id: str, turn_id: str) -> LockHolder | None:
        """Take the lease now (None) or say who holds it. Blocking: call off the loop."""
        ...

    def release(self, conversation_id: str) -> None:
        """Give the lease back (no error if not held). Blocking: call off the loop."""
        ...


TextDeltaCallback = Callable[[str], None]


class ChatModel(Protocol):
    """A Gemini-like chat model."""

    async def generate(
        self, request: ModelRequest, on_text_delta: TextDeltaCallback | None = None
    ) -> MessageEvent:
        """Stream one reply; call `on_text_delta` for visible text; return the final content.

        Raises `ModelError` on failure.
        """
        ...

    async def count_tokens(self, request: ModelRequest) -> int:
        """The prompt size of `request` in tokens."""
        ...


class Warmable(Protocol):
    """An adapter with slow start-up work a front end may do before the first request.

    Optional: the agent never calls it; without it the first request pays the cost.
    """

    def prepare(self) -> None:
        """Blocking imports and set-up (seconds): call it in a worker thread."""
        ...

    def connect(self) -> None:
        """Build the client (fast, not thread-safe): call it on the loop's thread after
        `prepare`."""
        ...


class ConnectionCheck(Protocol):
    """A model that can say, with one cheap request, whether the key and model work."""

    async def check_connection(self, model: str) -> str:
        """A sentence saying the connection works; raises `ModelError` when it does not."""
        ...


class WarmableChatModel(ChatModel, Warmable, ConnectionCheck, Protocol):
    """A chat model with the optional warm-up and connection check (the Gemini adapter)."""


ApprovalScope = Literal["once", "session", "always"]


@dataclass(frozen=True)
class ApprovalRequest:
    """A tool call waiting for the user's word."""

    call_id: str | None
    tool: str
    args: JsonObject
    source: str | None = None
    """Where the tool comes from when it is not Koroku's own (e.g. an MCP server and tool)."""


@dataclass(frozen=True)
class ApprovalDecision:
    """The user's answer. `args` replaces the call's arguments (e.g. an edited command)."""

    allowed: bool
    scope: ApprovalScope = "once"
    args: JsonObject | None = None
    reason: str | None = None
    """Why a call was not allowed when it is not the person's no (told to the model)."""


class Approver(Protocol):
    """Asks the user whether a tool call may run."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """Answer one request; must not raise for a plain 'no'."""
        ...


class Notifier(Protocol):
    """Tells the person something while no window may be open (a desktop notification, or a
    line on stderr). `actions` are (key, label) pairs a notification may offer; `tag` names
    what it is about (e.g. a task's id) so a newer one can replace it."""

    def notify(
        self, title: str, body: str, *, actions: Sequence[tuple[str, str]] = (), tag: str = ""
    ) -> None:
        """Show it; must not raise (a notification that cannot be shown is logged)."""
        ...


class Embedder(Protocol):
    """An embedding model: stored text and queries to vectors (`ModelError` on failure)."""

    model: str
    dimensions: int

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per stored text, in order."""
        ...

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a search query."""
        ...


class RecallStore(Protocol):
    """What recall by meaning reads and writes in the log's file (store/vectors/store.py)."""

    @property
    def read_only(self) -> bool:
        """True when vectors cannot be stored (a read-only data dir)."""
        ...

    def status(self, model: str, dimensions: int) -> EmbeddingStatus:
        """How far the log is embedded with this model (a scan: not on every turn)."""
        ...

    def pending(self, model: str, dimensions: int, max_events: int = 64) -> EmbeddingBatch:
        """The chunks of the next events not yet embedded with this model."""
        ...

    def store(
        self, model: str, dimensions: int, batch: EmbeddingBatch, vectors: list[list[float]]
    ) -> None:
        """Save a batch's vectors and move the progress past it."""
        ...

    def nearest(
        self,
        model: str,
        dimensions: int,
        query: list[float],
        limit: int,
        below_seq: int | None = None,
    ) -> list[VectorMatch]:
        """Events most similar to `query`, best first."""
        ...

    def keyword(self, query: str, limit: int, below_seq: int | None = None) -> list[int]:
        """The seqs of the best matches of any of the words, best BM25 rank first."""
        ...

    def catch_up_keywords(self, max_events: int | None) -> int:
        """Index what is new for the keyword leg (at most `max_events`; None: all)."""
        ...

    def created(self, seqs: list[int]) -> dict[int, float]:
        """When each of these events was written."""
        ...

    def found(self, seqs: list[int], query: str) -> dict[int, SearchHit]:
        """Search hits for these events, the snippet showing the query's words."""
        ...

    def similarity_floor(self, model: str, dimensions: int, query: list[float]) -> float | None:
        """The cosine below which a match for `query` is no closer than most of the log."""
        ...

    def hits(self, seqs: list[int]) -> dict[int, SearchHit]:
        """Search hits for events by seq (snippet: the start of their text)."""
        ...

    def seqs_of_events(self, event_ids: list[str]) -> dict[str, int]:
        """The local seqs of events by their global ids (those in this log)."""
        ...


class MemoryVectorStore(Protocol):
    """The memory files' vectors (store/vectors/memory.py), keyed by file and content hash."""

    def pending(self, model: str, dims: int) -> list[MemoryChunk]:
        """Chunks of new or changed memory files (vectors of removed files are dropped)."""
        ...

    def store(
        self, model: str, dims: int, chunks: list[MemoryChunk], vectors: list[list[float]]
    ) -> None:
        """Save the vectors of `chunks`, replacing older ones of the same files."""
        ...

    def nearest(self, model: str, dims: int, query: list[float], limit: int) -> list[MemoryMatch]:
        """Memory chunks most similar to `query`, best first."""
        ...

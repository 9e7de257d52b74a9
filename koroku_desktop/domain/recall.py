"""Values of recall by meaning: what is embedded, how far embedding has got, what matched."""

from __future__ import annotations

from dataclasses import dataclass

from koroku_desktop.domain.queries import SearchHit

EMBEDDED_KINDS = ("message", "compaction")
"""The kinds of event that are embedded, and so may be found by meaning or surface."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of an event's text to embed: event `seq`, piece number `chunk`."""

    seq: int
    chunk: int
    text: str


@dataclass(frozen=True, slots=True)
class EmbeddingBatch:
    """The next events to embed: their chunks, and the seq up to which they were read."""

    chunks: list[Chunk]
    upto_seq: int
    events: int
    """How many events the batch covers (some have no text worth embedding)."""


@dataclass(frozen=True, slots=True)
class EmbeddingStatus:
    """How far the log is embedded with one model at one dimensionality."""

    model: str
    dimensions: int
    done_seq: int
    last_seq: int
    pending_events: int
    vectors: int

    @property
    def complete(self) -> bool:
        """True when every event written so far has been embedded."""
        return self.pending_events == 0


@dataclass(frozen=True, slots=True)
class VectorMatch:
    """An event whose best chunk is close to the query (cosine similarity, -1..1)."""

    seq: int
    similarity: float


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One result of the hybrid search: the hit, its fused score and where it came from."""

    hit: SearchHit
    score: float
    keyword_rank: int | None = None
    similarity: float | None = None
    in_context: bool = False
    """True when the event is already in the live context the model sees."""


@dataclass(frozen=True, slots=True)
class MemoryChunk:
    """A piece of a memory file to embed: the file's name, its content hash, piece `chunk`."""

    file: str
    hash: str
    chunk: int
    text: str


@dataclass(frozen=True, slots=True)
class MemoryMatch:
    """A piece of a memory file close to the query (cosine similarity, -1..1)."""

    file: str
    chunk: int
    text: str
    similarity: float

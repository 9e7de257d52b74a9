"""VectorStore: embeddings of the log in the same SQLite file, and the hybrid search's reads.

`vector_spaces` names each (model, dimensionality) ever used and how far the log is embedded
in it (`done_seq`); `event_vectors` holds one int8 vector per (space, event seq, chunk). A new
model or dimensionality is a new space starting at seq 0, so a model change re-embeds the
whole log in the background; the old space's vectors are dropped once the new one has caught
up. Embedding advances in seq order, so one number per space says what is left to do, and
logs written before this feature are simply behind.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.domain.recall import (
    EMBEDDED_KINDS,
    Chunk,
    EmbeddingBatch,
    EmbeddingStatus,
    VectorMatch,
)
from koroku_desktop.store.database import KorokuDatabase, OperationalError
from koroku_desktop.store.log.rows import COLUMNS, parse_row
from koroku_desktop.store.search.context import SEARCH_CATCH_UP, ContextIndex
from koroku_desktop.store.search.index import SearchIndex
from koroku_desktop.store.search.searchable import fts_any_query, searchable_text
from koroku_desktop.store.vectors.embed_text import chunks, embeddable_text
from koroku_desktop.store.vectors.quantise import quantise_all

if TYPE_CHECKING:  # numpy (~0.2 s to import) loads only when vectors are used
    from koroku_desktop.store.vectors.index import VectorIndex

_KINDS_SQL = f"kind IN ({', '.join(repr(kind) for kind in EMBEDDED_KINDS)})"
_BM25 = (
    "SELECT e.seq, e.conversation_id, e.created_at, e.kind, e.payload,"
    " snippet(events_fts, 0, '[[', ']]', '…', 16), events_fts.rank"
    " FROM events_fts JOIN events AS e ON e.seq = events_fts.rowid"
    " WHERE events_fts MATCH ? AND events_fts.rowid > ? AND events_fts.rowid < ?"
    " ORDER BY rank LIMIT ?"
)
SNIPPET_CHARS = 240
INDEX_FOLDER = "vector-index"
"""The persisted vector index's folder in the data dir (see store/vectors/files.py)."""


class VectorStore:
    """Vectors of the log's events per embedding space, BM25 search, and embedding progress."""

    def __init__(
        self, db: KorokuDatabase, index: SearchIndex, index_dir: Path | None = None
    ) -> None:
        """`index_dir`: where the vector index is persisted (None: built in memory only)."""
        self._db = db
        self._fts = index
        self.index_dir = index_dir
        self._lock = threading.Lock()
        self._indexes: dict[int, VectorIndex] = {}
        self.context = ContextIndex(db)
        """The keyword leg's index of messages with their context (store/search/context.py)."""

    @property
    def read_only(self) -> bool:
        """True when vectors cannot be stored (the log was opened read-only)."""
        return self._db.read_only

    # -- spaces and progress ---------------------------------------------------------------

    def _space_id(self, model: str, dimensions: int) -> int | None:
        """The space's id, or None when nothing was ever embedded with it (no write)."""
        row = (
            self._db.conn()
            .execute(
                "SELECT id FROM vector_spaces WHERE model = ? AND dims = ?", (model, dimensions)
            )
            .fetchone()
        )
        return None if row is None else int(row[0])

    def _has_vectors(self, space: int) -> bool:
        """Whether the space holds a vector (a search of an empty one needs no numpy)."""
        if space in self._indexes:
            return True
        conn = self._db.conn()
        found = conn.execute("SELECT 1 FROM event_vectors WHERE space = ? LIMIT 1", (space,))
        return found.fetchone() is not None

    def _space(self, model: str, dimensions: int) -> int:
        """The space's id, created when missing (a write: only the embedder calls it)."""
        found = self._space_id(model, dimensions)
        if found is not None:
            return found
        conn = self._db.conn()
        with self._db.atomic("IMMEDIATE"):
            conn.execute(
                "INSERT OR IGNORE INTO vector_spaces (model, dims, done_seq, created_at)"
                " VALUES (?, ?, 0, ?)",
                (model, dimensions, time.time()),
            )
        return self._space(model, dimensions)

    def _done_seq(self, space: int) -> int:
        row = (
            self._db.conn()
            .execute("SELECT done_seq FROM vector_spaces WHERE id = ?", (space,))
            .fetchone()
        )
        return int(row[0]) if row else 0

    def status(self, model: str, dimensions: int) -> EmbeddingStatus:
        """How far the log is embedded in this space (counts pending events: a scan)."""
        conn = self._db.conn()
        space = self._space_id(model, dimensions) or 0
        done = self._done_seq(space)
        (last,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
        (pending,) = conn.execute(
            f"SELECT COUNT(*) FROM events WHERE seq > ? AND {_KINDS_SQL}", (done,)
        ).fetchone()
        (vectors,) = conn.execute(
            "SELECT COUNT(*) FROM event_vectors WHERE space = ?", (space,)
        ).fetchone()
        return EmbeddingStatus(model, dimensions, done, int(last), int(pending), int(vectors))

    def pending(self, model: str, dimensions: int, max_events: int = 64) -> EmbeddingBatch:
        """The chunks of the next `max_events` events not yet embedded in this space."""
        space = self._space(model, dimensions)
        done = self._done_seq(space)
        rows = (
            self._db.conn()
            .execute(
                f"SELECT {COLUMNS} FROM events WHERE seq > ? AND {_KINDS_SQL} ORDER BY seq LIMIT ?",
                (done, max_events),
            )
            .fetchall()
        )
        found: list[Chunk] = []
        for row in rows:
            entry = parse_row(row)
            if isinstance(entry, StoredEvent):
                found.extend(chunks(entry.seq, embeddable_text(entry.event)))
        upto = int(rows[-1][0]) if rows else done
        return EmbeddingBatch(found, upto, len(rows))

    def store(
        self, model: str, dimensions: int, batch: EmbeddingBatch, vectors: list[list[float]]
    ) -> None:
        """Save a batch's vectors and move the space's progress past it, in one transaction."""
        space = self._space(model, dimensions)
        rows = [
            (space, chunk.seq, chunk.chunk, scale, blob)
            for chunk, (scale, blob) in zip(batch.chunks, quantise_all(vectors), strict=True)
        ]
        with self._db.atomic("IMMEDIATE"):
            conn = self._db.conn()
            conn.executemany(
                "INSERT OR REPLACE INTO event_vectors (space, seq, chunk, scale, vector)"
                " VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute(
                "UPDATE vector_spaces SET done_seq = MAX(done_seq, ?) WHERE id = ?",
                (batch.upto_seq, space),
            )
            caught_up = conn.execute(
                f"SELECT 1 FROM events WHERE seq > ? AND {_KINDS_SQL} LIMIT 1", (batch.upto_seq,)
            ).fetchone()
            if caught_up is None:
                self._drop_other_spaces(space)
        if caught_up is None:
            self._drop_other_index_files(space)

    def _drop_other_spaces(self, space: int) -> None:
        conn = self._db.conn()
        conn.execute("DELETE FROM event_vectors WHERE space != ?", (space,))
        conn.execute("DELETE FROM vector_spaces WHERE id != ?", (space,))

    def _drop_other_index_files(self, space: int) -> None:
        """Remove the persisted indexes of dropped spaces (a mapping process keeps its copy)."""
        if self.index_dir is None or not self.index_dir.is_dir():
            return
        for folder in self.index_dir.glob("space-*"):
            if folder.name != f"space-{space}":
                shutil.rmtree(folder, ignore_errors=True)

    # -- searching ---------------------------------------------------------------------------

    def nearest(
        self,
        model: str,
        dimensions: int,
        query: list[float],
        limit: int,
        below_seq: int | None = None,
    ) -> list[VectorMatch]:
        """Events whose best chunk is most similar to `query`, best first."""
        if len(query) != dimensions:
            raise ValueError(f"a query vector of {len(query)} dimensions in a {dimensions}-d space")
        index = self._index(model, dimensions)
        if index is None:
            return []
        from koroku_desktop.store.vectors.index import unit

        return index.nearest(unit(query), limit, below_seq)

    def _index(self, model: str, dimensions: int) -> VectorIndex | None:
        """The space's index, up to date with the table (None: nothing embedded with it)."""
        space = self._space_id(model, dimensions)
        if space is None or not self._has_vectors(space):
            return None
        from koroku_desktop.store.vectors.files import VectorFiles
        from koroku_desktop.store.vectors.index import VectorIndex

        with self._lock:
            index = self._indexes.get(space)
            if index is None:
                files = None
                if self.index_dir is not None:
                    folder = self.index_dir / f"space-{space}"
                    files = VectorFiles(folder, space, model, dimensions)
                writable = not self._db.read_only
                index = VectorIndex(space, dimensions, files, writable=writable)
                self._indexes[space] = index
        index.refresh(self._db.conn())
        return index

    def keyword(self, query: str, limit: int, below_seq: int | None = None) -> list[int]:
        """The seqs of `keyword_scored`, best first."""
        return [seq for seq, _ in self.keyword_scored(query, limit, below_seq)]

    def keyword_scored(
        self, query: str, limit: int, below_seq: int | None = None
    ) -> list[tuple[int, float]]:
        """(seq, BM25 relevance: higher is better) of the best matches of any of the query's
        words, best first: each message with the turns before it, stemmed (store/search/
        context.py); events not in that index yet through the plain full-text index."""
        match = fts_any_query(query)
        if match is None or limit <= 0:
            return []
        # On a read-only file the flush fails: rows not yet folded in are missed then.
        with contextlib.suppress(OperationalError):
            self._fts.flush()
        self.catch_up_keywords(SEARCH_CATCH_UP)
        bound = below_seq if below_seq is not None else 2**62
        done = self.context.done_seq()
        ranked = self.context.ranked(match, limit, min(bound, done + 1))
        if done + 1 < bound:  # not in the context index yet: the plain index
            rows = self._db.conn().execute(_BM25, (match, done, bound, limit)).fetchall()
            plain = [(int(row[0]), float(row[6])) for row in rows]
            ranked = sorted([*ranked, *plain], key=lambda pair: pair[1])
        return [(seq, -rank) for seq, rank in ranked[:limit]]

    def similarities(
        self, model: str, dimensions: int, query: list[float], seqs: list[int]
    ) -> dict[int, float]:
        """The cosine of each event's best chunk with `query`, for events embedded in this
        space (the others are left out): read by seq, not through the index."""
        from koroku_desktop.store.vectors.index import best_similarities, unit

        space = self._space_id(model, dimensions)
        if space is None or len(query) != dimensions:
            return {}
        return best_similarities(self._db.conn(), space, unit(query), seqs)

    def catch_up_keywords(self, max_events: int | None) -> int:
        """Index what is new for the keyword leg (see `ContextIndex.catch_up`)."""
        try:
            return self.context.catch_up(max_events)
        except OperationalError:  # read-only or busy: the plain index covers it
            return 0

    def created(self, seqs: list[int]) -> dict[int, float]:
        """When each of these events was written (for the recency prior)."""
        found: dict[int, float] = {}
        for start in range(0, len(seqs), 500):
            part = seqs[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self._db.conn().execute(
                f"SELECT seq, created_at FROM events WHERE seq IN ({marks})", part
            )
            found.update((int(seq), float(at)) for seq, at in rows)
        return found

    def found(self, seqs: list[int], query: str) -> dict[int, SearchHit]:
        """Search hits for these events: the snippet shows the query's words where the
        event's own text has them (`[[`/`]]`), else the start of its text."""
        hits = self.hits(seqs)
        match = fts_any_query(query)
        if match is None:
            return hits
        snippets = self._snippets(match, list(hits))
        return {
            seq: dataclasses.replace(hit, snippet=snippets.get(seq, hit.snippet))
            for seq, hit in hits.items()
        }

    def texts(self, seqs: list[int]) -> dict[int, tuple[str, str, str]]:
        """(full searchable text, turn id, event id) of these events, for `--json`."""
        found: dict[int, tuple[str, str, str]] = {}
        for row in self._rows(seqs):
            entry = parse_row(row)
            if isinstance(entry, StoredEvent):
                found[entry.seq] = (searchable_text(entry.event), entry.turn_id, entry.event_id)
        return found

    def similarity_floor(self, model: str, dimensions: int, query: list[float]) -> float | None:
        """The cosine below which a match for `query` is no closer than most of the log,
        calibrated on this space's own vectors (`VectorIndex.floor`); None while few."""
        index = self._index(model, dimensions)
        if index is None:
            return None
        from koroku_desktop.store.vectors.index import unit

        return index.floor(unit(query))

    def _snippets(self, match: str, seqs: list[int]) -> dict[int, str]:
        """The full-text index's snippets (matches in `[[`/`]]`) of these events, where their
        own words match (a unit found by its context or by a stem has none)."""
        if not seqs:
            return {}
        marks = ",".join("?" * len(seqs))
        rows = (
            self._db.conn()
            .execute(
                "SELECT rowid, snippet(events_fts, 0, '[[', ']]', '…', 16) FROM events_fts"
                f" WHERE events_fts MATCH ? AND rowid IN ({marks})",
                (match, *seqs),
            )
            .fetchall()
        )
        return {int(seq): str(snippet) for seq, snippet in rows}

    def _rows(self, seqs: list[int]) -> list[tuple[Any, ...]]:
        """The `events` rows (`COLUMNS`) of these seqs."""
        if not seqs:
            return []
        marks = ",".join("?" * len(seqs))
        sql = f"SELECT {COLUMNS} FROM events WHERE seq IN ({marks})"
        return list(self._db.conn().execute(sql, tuple(seqs)).fetchall())

    def seqs_of_events(self, event_ids: list[str]) -> dict[str, int]:
        """The local seqs of events by their global ids (ids not in this log are left out)."""
        found: dict[str, int] = {}
        for start in range(0, len(event_ids), 500):
            ids = event_ids[start : start + 500]
            marks = ",".join("?" * len(ids))
            rows = (
                self._db.conn()
                .execute(f"SELECT event_id, seq FROM events WHERE event_id IN ({marks})", ids)
                .fetchall()
            )
            found.update((str(event_id), int(seq)) for event_id, seq in rows)
        return found

    def hits(self, seqs: list[int]) -> dict[int, SearchHit]:
        """Search hits (with the start of the embedded text as snippet) for events by seq."""
        found: dict[int, SearchHit] = {}
        for row in self._rows(seqs):
            entry = parse_row(row)
            if not isinstance(entry, StoredEvent):
                continue
            text = " ".join(embeddable_text(entry.event).split())
            snippet = text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "…"
            payload = (entry.seq, entry.conversation_id, entry.created_at, row[2], row[4])
            found[entry.seq] = _hit(payload, snippet)
        return found


def _role(payload: object) -> str | None:
    try:
        data = json.loads(payload if isinstance(payload, str | bytes) else str(payload))
    except ValueError:
        return None
    role = data.get("role") if isinstance(data, dict) else None
    return role if isinstance(role, str) else None


def _hit(row: tuple[object, ...], snippet: str) -> SearchHit:
    seq, conversation_id, created_at, kind, payload = row[:5]
    return SearchHit(
        seq=int(str(seq)),
        conversation_id=str(conversation_id),
        created_at=float(str(created_at)),
        kind=str(kind),
        role=_role(payload),
        snippet=snippet,
    )

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
import json
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.domain.queries import SearchHit
from koroku_desktop.domain.recall import Chunk, EmbeddingBatch, EmbeddingStatus, VectorMatch
from koroku_desktop.store.database import KorokuDatabase, OperationalError
from koroku_desktop.store.log.rows import COLUMNS, parse_row
from koroku_desktop.store.search.index import SearchIndex
from koroku_desktop.store.search.searchable import fts_any_query
from koroku_desktop.store.vectors.embed_text import chunks, embeddable_text

if TYPE_CHECKING:  # numpy (~0.2 s to import) loads only when vectors are used
    from koroku_desktop.store.vectors.index import VectorIndex

EMBEDDED_KINDS = ("message", "compaction")
_KINDS_SQL = "kind IN ('message', 'compaction')"
_BM25 = (
    "SELECT e.seq, e.conversation_id, e.created_at, e.kind, e.payload,"
    " snippet(events_fts, 0, '[[', ']]', '…', 16)"
    " FROM events_fts JOIN events AS e ON e.seq = events_fts.rowid"
    " WHERE events_fts MATCH ? AND events_fts.rowid < ? ORDER BY rank LIMIT ?"
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
        from koroku_desktop.store.vectors.index import quantise, unit

        space = self._space(model, dimensions)
        rows = []
        for chunk, values in zip(batch.chunks, vectors, strict=True):
            scale, blob = quantise(unit(values))
            rows.append((space, chunk.seq, chunk.chunk, scale, blob))
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
        from koroku_desktop.store.vectors.files import VectorFiles
        from koroku_desktop.store.vectors.index import VectorIndex, unit

        space = self._space_id(model, dimensions)
        if space is None:
            return []
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
        return index.nearest(unit(query), limit, below_seq)

    def keyword(self, query: str, limit: int, below_seq: int | None = None) -> list[SearchHit]:
        """Full-text matches of any of the query's words, best BM25 rank first."""
        match = fts_any_query(query)
        if match is None or limit <= 0:
            return []
        # On a read-only file the flush fails: rows not yet folded in are missed then.
        with contextlib.suppress(OperationalError):
            self._fts.flush()
        bound = below_seq if below_seq is not None else 2**62
        rows = self._db.conn().execute(_BM25, (match, bound, limit)).fetchall()
        return [_hit(row, str(row[5])) for row in rows]

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
        if not seqs:
            return {}
        marks = ",".join("?" * len(seqs))
        rows = (
            self._db.conn()
            .execute(f"SELECT {COLUMNS} FROM events WHERE seq IN ({marks})", tuple(seqs))
            .fetchall()
        )
        found: dict[int, SearchHit] = {}
        for row in rows:
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

"""VectorIndex: the event vectors of one embedding space in memory, searched by brute force.

Vectors are stored quantised to int8 with one float scale each (`store/vectors/quantise.py`):
768 dims take 772 bytes instead of 3,072 as float32, and the cosine ranking is kept to within
about 1 %.
Search is a brute-force scan (see `VectorIndex`): no extension to load (this Python's
sqlite3 cannot load `sqlite-vec`, and a frozen bundle would have to ship it), no index to
build or keep in step.
The index loads rows it has not seen (by rowid) before every search, so vectors written by
the background embedder or by another process are found at once. Persisted (store/
vector_files.py), a new process maps the arrays instead of rebuilding them from the table.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass, field

import numpy as np
import numpy.typing as npt

from koroku_desktop.domain.recall import VectorMatch
from koroku_desktop.store.database import Connection
from koroku_desktop.store.vectors.files import Arrays, IndexMeta, VectorFiles, words
from koroku_desktop.store.vectors.quantise import unit_of

log = logging.getLogger(__name__)

FLOOR_MIN_ROWS, FLOOR_SAMPLE = 200, 1_000
FLOOR_QUANTILE = 0.98
"""See `VectorIndex.floor`."""
CANDIDATES = 2_000
"""Rows the sign-bit pass hands to exact int8 scoring."""
HAMMING_BLOCK = 32_768
"""Rows whose Hamming distances the sign-bit pass sums at a time (see `_candidates`)."""

# NOT INDEXED: walk the rowid range (new rows only); through the (space, seq, chunk) index
# SQLite would visit every row of the space on every search.
_LOAD = (
    "SELECT rowid, seq, scale, vector FROM event_vectors NOT INDEXED"
    " WHERE space = ? AND rowid > ? ORDER BY rowid LIMIT ?"
)
PAGE_ROWS = 200_000
"""Rows read from the table at a time (bounds the memory a first load needs)."""
_COUNT = "SELECT COUNT(*) FROM event_vectors WHERE space = ? AND rowid <= ?"


def unit(values: list[float]) -> npt.NDArray[np.float32]:
    """`values` as a float32 unit vector (a zero vector stays zero)."""
    return unit_of(np.asarray(values, dtype=np.float32))


def dot_rows(
    matrix: npt.NDArray[np.int8] | npt.NDArray[np.float32], query: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Each row of `matrix` dotted with `query`, in float32 on the calling thread.

    numpy's own loop (`einsum`), not BLAS: OpenBLAS splits a product of a few thousand rows
    over one thread a core, and on a busy machine they wait for each other (2,000 rows x 768
    dims at load ~7 on 2 cores: 18-28 ms through BLAS, 0.3 ms here). int8 rows are cast as
    they are read (no float copy of the matrix)."""
    product: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, query, dtype=np.float32)
    return product


Row = tuple[int, int, float, bytes]
"""One `event_vectors` row as loaded: rowid, seq, scale, int8 vector bytes."""


def empty_arrays(dims: int) -> Arrays:
    """An index segment without rows."""
    return Arrays(
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.float32),
        np.zeros((0, dims), dtype=np.int8),
        [np.zeros(0, dtype=np.uint64) for _ in range(words(dims))],
    )


def rows_arrays(rows: list[Row], dims: int) -> Arrays:
    """Rows as an in-memory index segment (sign bits computed)."""
    matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.int8).reshape(-1, dims)
    bits = sign_bits(matrix)
    return Arrays(
        np.fromiter((r[1] for r in rows), np.int64, len(rows)),
        np.fromiter((r[2] for r in rows), np.float32, len(rows)),
        matrix,
        [np.ascontiguousarray(bits[:, w]) for w in range(bits.shape[1])],
    )


def _joined(*parts: Arrays) -> Arrays:
    return Arrays(
        np.concatenate([p.seqs for p in parts]),
        np.concatenate([p.scales for p in parts]),
        np.concatenate([p.matrix for p in parts]),
        [np.concatenate(words) for words in zip(*(p.bits for p in parts), strict=True)],
    )


@dataclass(eq=False)
class VectorIndex:
    """The int8 vectors of one space (model and dimensionality), kept in step with the table.

    Search is two passes: the Hamming distance between sign bits (1 bit a dimension, XOR and
    popcount, word by word) picks `CANDIDATES` rows, then their int8 vectors are scored
    exactly. Below that many rows every row is scored exactly. Rows live in two segments:
    `base`, the memory-mapped files of `VectorFiles` when persisted, and `tail`, rows built
    in memory from the table (all of them without files; for a read-only process, those
    written since the files were last appended to).
    """

    space: int
    dimensions: int
    files: VectorFiles | None = None
    _: KW_ONLY
    writable: bool = True
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _generation: str | None = field(init=False, default=None)
    _sample: tuple[int, npt.NDArray[np.float32]] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self._last_rowid = 0
        self._base = empty_arrays(self.dimensions)
        self._tail = empty_arrays(self.dimensions)

    def __len__(self) -> int:
        return int(self._base.seqs.size + self._tail.seqs.size)

    def refresh(self, conn: Connection) -> None:
        """Load the rows written since the last refresh (into the files, when persisted)."""
        with self._lock:
            if self.files is not None:
                try:
                    if self.writable:
                        self._refresh_files(conn, self.files)
                        return
                    if not self._map_read_only(conn, self.files):
                        self.files = None  # none (yet) or stale: the table it is
                except (OSError, ValueError):
                    log.warning("vector index files unusable, indexing in memory", exc_info=True)
                    self.files = None
                    self._clear()
            pages = [rows_arrays(rows, self.dimensions) for rows in self._new_pages(conn)]
            if pages:
                self._tail = _joined(self._tail, *pages)

    def _new_pages(self, conn: Connection) -> Iterator[list[Row]]:
        """The rows of the space after the last rowid seen, a page at a time (of the right
        size; a page's Python objects are freed before the next is read)."""
        while True:
            page = conn.execute(_LOAD, (self.space, self._last_rowid, PAGE_ROWS)).fetchall()
            if not page:
                return
            self._last_rowid = int(page[-1][0])
            rows = [r for r in page if len(r[3]) == self.dimensions]
            del page
            if rows:
                yield rows

    def _refresh_files(self, conn: Connection, files: VectorFiles) -> None:
        """Writable: map the files (checked once, rebuilt when stale), append what is new."""
        with files.locked():
            meta = files.read_meta()
            if meta is None or meta.generation != self._generation or meta.rows < len(self):
                if meta is None or not self._valid(conn, meta):
                    meta = files.reset()
                self._generation = meta.generation
                self._map(files.open(meta), meta)
            elif meta.rows > len(self):  # another process appended
                self._map(files.open(meta), meta)
            appended = False
            for rows in self._new_pages(conn):
                matrix = np.frombuffer(b"".join(r[3] for r in rows), np.int8)
                meta = files.append(meta, rows, sign_bits(matrix.reshape(-1, self.dimensions)))
                appended = True
            if appended:
                self._map(files.open(meta), meta)

    def _map_read_only(self, conn: Connection, files: VectorFiles) -> bool:
        """Read-only (nothing is written): map valid files once, newer rows go to the tail;
        False when there are none to map."""
        if self._generation is not None:
            return True
        meta = files.read_meta()
        if meta is None or not self._valid(conn, meta):
            return False
        self._generation = meta.generation
        self._map(files.open(meta), meta)
        return True

    def _valid(self, conn: Connection, meta: IndexMeta) -> bool:
        """Do the files hold the table's rows up to `meta.last_rowid` (count, last seq)?"""
        if meta.rows == 0:
            return True
        last = conn.execute(
            "SELECT space, seq FROM event_vectors WHERE rowid = ?", (meta.last_rowid,)
        ).fetchone()
        if last is None or (int(last[0]), int(last[1])) != (self.space, meta.last_seq):
            return False
        (count,) = conn.execute(_COUNT, (self.space, meta.last_rowid)).fetchone()
        return int(count) == meta.rows

    def _map(self, arrays: Arrays, meta: IndexMeta) -> None:
        self._base, self._tail = arrays, empty_arrays(self.dimensions)
        self._last_rowid = meta.last_rowid

    def floor(self, query: npt.NDArray[np.float32]) -> float | None:
        """The cosine that only `FLOOR_QUANTILE` of this space's vectors reach with `query`
        (a fixed random sample, renewed as the index doubles): a match below it is no closer
        than most of the log, whatever the model's scale (a small static model's related
        texts score 0.4, Gemini's unrelated ones 0.5). None below `FLOOR_MIN_ROWS` rows."""
        with self._lock:
            segments = (self._base, self._tail)
        rows = sum(int(seg.seqs.size) for seg in segments)
        if rows < FLOOR_MIN_ROWS:
            return None
        if self._sample is None or rows >= 2 * self._sample[0]:
            rng = np.random.default_rng(rows)
            picks = np.sort(rng.choice(rows, size=min(rows, FLOOR_SAMPLE), replace=False))
            self._sample = (rows, _rows_of(segments, picks))
        return float(np.quantile(dot_rows(self._sample[1], query), FLOOR_QUANTILE))

    def nearest(
        self, query: npt.NDArray[np.float32], limit: int, below_seq: int | None = None
    ) -> list[VectorMatch]:
        """The `limit` events with the most similar chunk, best first."""
        with self._lock:
            segments = (self._base, self._tail)
        if limit <= 0:
            return []
        found = [m for seg in segments for m in _nearest_in(seg, query, limit, below_seq)]
        found.sort(key=lambda m: -m.similarity)
        matches: list[VectorMatch] = []
        seen: set[int] = set()
        for match in found:
            if match.seq not in seen:
                seen.add(match.seq)
                matches.append(match)
        return matches[:limit]


def _rows_of(
    segments: tuple[Arrays, Arrays], picks: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """The float vectors of rows `picks` (sorted) counted across the segments in order."""
    out = []
    offset = 0
    for seg in segments:
        size = int(seg.seqs.size)
        local = picks[(picks >= offset) & (picks < offset + size)] - offset
        if local.size:
            out.append(seg.rows(local).astype(np.float32) * seg.scales[local][:, None])
        offset += size
    return np.concatenate(out)


_VECTORS_OF = "SELECT seq, scale, vector FROM event_vectors WHERE space = ? AND seq IN ({})"


def best_similarities(
    conn: Connection, space: int, query: npt.NDArray[np.float32], seqs: list[int]
) -> dict[int, float]:
    """The cosine of each event's best chunk with the unit `query` (events without a
    vector of the query's size in `space` are left out)."""
    dims = int(query.size)
    found: dict[int, float] = {}
    for start in range(0, len(seqs), 500):
        part = seqs[start : start + 500]
        sql = _VECTORS_OF.format(",".join("?" * len(part)))
        rows = [r for r in conn.execute(sql, (space, *part)) if len(r[2]) == dims]
        if not rows:
            continue
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int8).reshape(-1, dims)
        scales = np.fromiter((r[1] for r in rows), np.float32, len(rows))
        scores = dot_rows(matrix, query) * scales
        for (seq, _, _), score in zip(rows, scores.tolist(), strict=True):
            found[int(seq)] = max(score, found.get(int(seq), -1.0))
    return found


def _nearest_in(
    seg: Arrays, query: npt.NDArray[np.float32], limit: int, below_seq: int | None
) -> list[VectorMatch]:
    """The best `limit` distinct events of one segment."""
    seqs = seg.seqs
    if seqs.size == 0:
        return []
    allowed = None if below_seq is None else seqs < below_seq
    rows = _candidates(seg.bits, query, allowed, max(CANDIDATES, limit * 20))
    scores = dot_rows(seg.rows(rows), query) * seg.scales[rows]
    order = np.argsort(-scores)
    matches: list[VectorMatch] = []
    seen: set[int] = set()
    for i in order:
        row = rows[i]
        if allowed is not None and not allowed[row]:
            continue
        seq = int(seqs[row])
        if seq in seen:
            continue
        seen.add(seq)
        matches.append(VectorMatch(seq, float(scores[i])))
        if len(matches) >= limit:
            break
    return matches


def _candidates(
    bits: list[npt.NDArray[np.uint64]],
    query: npt.NDArray[np.float32],
    allowed: npt.NDArray[np.bool_] | None,
    count: int,
) -> npt.NDArray[np.intp]:
    """The rows whose sign bits are nearest the query's (all rows when few).

    The Hamming distance is summed one 64-bit word at a time over contiguous columns
    (about 2.5x faster than a row-wise sum over the 12 words of a 768-bit vector), a block
    of `HAMMING_BLOCK` rows at a time, so that the XOR and popcount buffers stay in the CPU's
    cache instead of going through memory once per word (a third faster at 1,000,000 rows)."""
    total = bits[0].size if bits else 0
    if total <= count:
        return np.arange(total)
    query_bits = sign_bits(query[None, :])[0]
    columns = [np.asarray(column) for column in bits]  # plain views: slicing a memmap is slow
    distance = np.zeros(total, dtype=np.uint16)
    word = np.empty(min(total, HAMMING_BLOCK), dtype=np.uint64)
    ones = np.empty(word.size, dtype=np.uint8)
    for start in range(0, total, HAMMING_BLOCK):
        end = min(total, start + HAMMING_BLOCK)
        block, xor, popcount = distance[start:end], word[: end - start], ones[: end - start]
        for w, query_word in enumerate(query_bits):
            np.bitwise_xor(columns[w][start:end], query_word, out=xor)
            np.bitwise_count(xor, out=popcount)
            np.add(block, popcount, out=block)
    if allowed is not None:
        distance[~allowed] = np.iinfo(np.uint16).max
    return np.argpartition(distance, count - 1)[:count]


def sign_bits(matrix: npt.NDArray[np.int8] | npt.NDArray[np.float32]) -> npt.NDArray[np.uint64]:
    """One bit a dimension (set when positive), packed into uint64 words per row."""
    rows, dims = matrix.shape
    padded = np.zeros((rows, words(dims) * 64), dtype=bool)
    padded[:, :dims] = matrix > 0
    return np.ascontiguousarray(np.packbits(padded, axis=1).view(np.uint64))

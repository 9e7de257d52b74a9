"""VectorIndex: the event vectors of one embedding space in memory, searched by brute force.

Vectors are stored quantised to int8 with one float scale each (`quantise`): 768 dims take
772 bytes instead of 3,072 as float32, and the cosine ranking is kept to within about 1 %.
Search converts the int8 matrix block by block to float32 and takes one matrix-vector
product per block: no extension to load (this Python's sqlite3 cannot load `sqlite-vec`,
and a frozen bundle would have to ship it), no index to build or keep in step.
The index loads rows it has not seen (by rowid) before every search, so vectors written by
the background embedder or by another process are found at once.
"""

from __future__ import annotations

import sqlite3
import threading

import numpy as np
import numpy.typing as npt

from koroku_desktop.domain.recall import VectorMatch

BLOCK_ROWS = 65_536
"""Rows converted to float32 at a time (256 MB of float32 at 768 dims would be 4x this)."""

_LOAD = (
    "SELECT rowid, seq, scale, vector FROM event_vectors"
    " WHERE space = ? AND rowid > ? ORDER BY rowid LIMIT 200000"
)


def quantise(vector: npt.NDArray[np.float32]) -> tuple[float, bytes]:
    """A unit vector as (scale, int8 bytes) with `vector ≈ scale * int8`."""
    peak = float(np.max(np.abs(vector))) if vector.size else 0.0
    scale = peak / 127.0 if peak > 0 else 1.0
    q = np.clip(np.rint(vector / scale), -127, 127).astype(np.int8)
    return scale, q.tobytes()


def unit(values: list[float]) -> npt.NDArray[np.float32]:
    """`values` as a float32 unit vector (a zero vector stays zero)."""
    vector = np.asarray(values, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


class VectorIndex:
    """The int8 vectors of one space (model and dimensionality), kept in step with the table."""

    def __init__(self, space: int, dimensions: int) -> None:
        self.space = space
        self.dimensions = dimensions
        self._lock = threading.Lock()
        self._last_rowid = 0
        self._seqs = np.zeros(0, dtype=np.int64)
        self._scales = np.zeros(0, dtype=np.float32)
        self._matrix = np.zeros((0, dimensions), dtype=np.int8)

    def __len__(self) -> int:
        return int(self._seqs.size)

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Load the rows written since the last refresh."""
        with self._lock:
            while True:
                rows = conn.execute(_LOAD, (self.space, self._last_rowid)).fetchall()
                if not rows:
                    return
                self._add(rows)

    def _add(self, rows: list[tuple[int, int, float, bytes]]) -> None:
        dims = self.dimensions
        good = [r for r in rows if len(r[3]) == dims]
        self._last_rowid = int(rows[-1][0])
        if not good:
            return
        matrix = np.frombuffer(b"".join(r[3] for r in good), dtype=np.int8).reshape(-1, dims)
        self._seqs = np.concatenate([self._seqs, np.fromiter((r[1] for r in good), np.int64)])
        self._scales = np.concatenate([self._scales, np.fromiter((r[2] for r in good), np.float32)])
        self._matrix = np.concatenate([self._matrix, matrix])

    def nearest(
        self, query: npt.NDArray[np.float32], limit: int, below_seq: int | None = None
    ) -> list[VectorMatch]:
        """The `limit` events with the most similar chunk, best first."""
        with self._lock:
            seqs, scales, matrix = self._seqs, self._scales, self._matrix
        if seqs.size == 0 or limit <= 0:
            return []
        scores = np.empty(seqs.size, dtype=np.float32)
        for start in range(0, seqs.size, BLOCK_ROWS):
            block = matrix[start : start + BLOCK_ROWS].astype(np.float32)
            scores[start : start + BLOCK_ROWS] = block @ query
        scores *= scales
        if below_seq is not None:
            scores[seqs >= below_seq] = -np.inf
        take = min(seqs.size, limit * 4)
        top = np.argpartition(-scores, take - 1)[:take]
        top = top[np.argsort(-scores[top])]
        matches: list[VectorMatch] = []
        seen: set[int] = set()
        for i in top:
            seq, score = int(seqs[i]), float(scores[i])
            if score == -np.inf or seq in seen:
                continue
            seen.add(seq)
            matches.append(VectorMatch(seq, score))
            if len(matches) >= limit:
                break
        return matches

"""VectorFiles: one embedding space's index persisted next to the log, memory-mapped on load.

A process that searches by meaning needs every vector of the space at hand. Reading a million
rows out of SQLite and computing their sign bits takes seconds at each start; these files
hold the same arrays, so a new process maps them (no copy: the OS pages in what a search
touches) and reads from SQLite only the rows written since.

`<data dir>/vector-index/space-<id>/` (folder 0700, files 0600) holds raw little-endian
arrays, appended to only: `seqs.i64`, `scales.f32`, `vectors.i8` (rows x dims) and one
`bits-<w>.u64` per 64-dimension word of sign bits (a contiguous column for the Hamming
pass), plus `meta.json`, replaced atomically after the data is synced: how many rows are
valid, the last `event_vectors` rowid they cover, and the model, dimensions and a
generation token. Bytes past `rows` (a crash mid-append) are cut off before the next append.
The files are a cache of the table: a mismatch with it (rows counted, the last row's seq,
the model) means they are rebuilt. Writers take an exclusive `flock` on `lock`.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import weakref
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from koroku_desktop.fsutil import atomic_write, exclusive_lock

FORMAT = 1


@dataclass(frozen=True, slots=True)
class IndexMeta:
    """What the files hold: `rows` valid rows covering `event_vectors` up to `last_rowid`."""

    format: int
    space: int
    model: str
    dims: int
    rows: int
    last_rowid: int
    last_seq: int
    generation: str


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Arrays:
    """The index's arrays (memory-mapped, read-only); `bits[w]` is word w of every row.

    `matrix_fd`, when set, is `vectors.i8` opened read-only, the candidate rows are read from
    with `pread`: gathering 2,000 scattered rows through the mapping would map the pages
    around each of them too (the kernel's fault-around), some 400 MB of resident memory. It
    is closed when the arrays are no longer used (a search may still hold them after a remap).
    """

    seqs: npt.NDArray[np.int64]
    scales: npt.NDArray[np.float32]
    matrix: npt.NDArray[np.int8]
    bits: list[npt.NDArray[np.uint64]]
    matrix_fd: int | None = None

    def rows(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.int8]:
        """The int8 vectors of `rows`, in that order."""
        if self.matrix_fd is None:
            return self.matrix[rows]
        dims, fd = self.matrix.shape[1], self.matrix_fd
        data = b"".join(os.pread(fd, dims, int(row) * dims) for row in rows)
        if len(data) != len(rows) * dims:
            raise ValueError("vectors.i8 is shorter than the rows mapped")
        return np.frombuffer(data, dtype=np.int8).reshape(len(rows), dims)


def words(dims: int) -> int:
    """64-bit words of sign bits per vector."""
    return (dims + 63) // 64


class VectorFiles:
    """The persisted index of one space in `folder` (see the module docstring)."""

    def __init__(self, folder: Path, space: int, model: str, dims: int) -> None:
        self.folder = folder
        self.space = space
        self.model = model
        self.dims = dims

    def _files(self) -> list[tuple[str, Any, int]]:
        """(name, dtype, items per row) of every data file."""
        names: list[tuple[str, Any, int]] = [
            ("seqs.i64", np.int64, 1),
            ("scales.f32", np.float32, 1),
            ("vectors.i8", np.int8, self.dims),
        ]
        names += [(f"bits-{w:02d}.u64", np.uint64, 1) for w in range(words(self.dims))]
        return names

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the folder's writer lock (exclusive, across processes)."""
        with exclusive_lock(self.folder / "lock"):
            yield

    def read_meta(self) -> IndexMeta | None:
        """The meta of these files, None when missing, unreadable or of another space."""
        try:
            data = json.loads((self.folder / "meta.json").read_text(encoding="utf-8"))
            meta = IndexMeta(**data)
        except (OSError, ValueError, TypeError):
            return None
        same = (meta.format, meta.space, meta.model, meta.dims) == (
            FORMAT,
            self.space,
            self.model,
            self.dims,
        )
        return meta if same else None

    def _write_meta(self, meta: IndexMeta) -> None:
        atomic_write(self.folder / "meta.json", json.dumps(asdict(meta)))

    def reset(self) -> IndexMeta:
        """Start over empty (a new generation): the data files are replaced by empty ones."""
        with contextlib.suppress(FileNotFoundError):
            (self.folder / "meta.json").unlink()
        for name, _dtype, _per_row in self._files():
            path = self.folder / name
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # a process that mapped the old file keeps its own copy
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
        meta = IndexMeta(FORMAT, self.space, self.model, self.dims, 0, 0, 0, secrets.token_hex(8))
        self._write_meta(meta)
        return meta

    def open(self, meta: IndexMeta) -> Arrays:
        """Map the first `meta.rows` rows (ValueError when a file is shorter than that)."""
        arrays: list[Any] = []
        for name, dtype, per_row in self._files():
            path = self.folder / name
            need = meta.rows * per_row * np.dtype(dtype).itemsize
            if path.stat().st_size < need:
                raise ValueError(f"{name} is shorter than its {meta.rows} rows")
            shape = (meta.rows, per_row) if per_row > 1 else (meta.rows,)
            if meta.rows == 0:
                arrays.append(np.zeros(shape, dtype=dtype))
            else:
                arrays.append(np.memmap(path, dtype=dtype, mode="r", shape=shape))
        seqs, scales, matrix, *bits = arrays
        fd = os.open(self.folder / "vectors.i8", os.O_RDONLY)
        found = Arrays(seqs, scales, matrix, bits, fd)
        weakref.finalize(found, os.close, fd)
        return found

    def append(
        self,
        meta: IndexMeta,
        rows: list[tuple[int, int, float, bytes]],
        bits: npt.NDArray[np.uint64],
    ) -> IndexMeta:
        """Append `rows` (rowid, seq, scale, int8 bytes) and their sign bits (rows x words);
        the data is synced before the new meta says it is there."""
        columns: list[bytes] = [
            np.fromiter((r[1] for r in rows), np.int64, len(rows)).tobytes(),
            np.fromiter((r[2] for r in rows), np.float32, len(rows)).tobytes(),
            b"".join(r[3] for r in rows),
        ]
        columns += [np.ascontiguousarray(bits[:, w]).tobytes() for w in range(bits.shape[1])]
        for (name, dtype, per_row), data in zip(self._files(), columns, strict=True):
            fd = os.open(self.folder / name, os.O_WRONLY)
            try:
                os.ftruncate(fd, meta.rows * per_row * np.dtype(dtype).itemsize)
                os.lseek(fd, 0, os.SEEK_END)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
        last_rowid, last_seq = int(rows[-1][0]), int(rows[-1][1])
        new = IndexMeta(
            FORMAT,
            self.space,
            self.model,
            self.dims,
            meta.rows + len(rows),
            last_rowid,
            last_seq,
            meta.generation,
        )
        self._write_meta(new)
        return new

"""MemoryVectors: the daily memory files embedded for search by meaning, by file and content.

Memory files (`<data dir>/memory/dd-mm-yyyy.md`) are people's files: appended to by
compactions, edited in the viewer or by hand, rebuilt from the log by a sync. So their
vectors are keyed by file name and a hash of the file's content, not by anything in the log:
a file whose hash changed is chunked and embedded again, a removed file's vectors are
dropped, and whoever changed the file does not matter. They are few (one file a day), so
they live in one JSON file per embedding space next to the event index
(`<data dir>/vector-index/memory-<model>-<dims>.json`, 0600, replaced atomically under a
lock) and are searched by brute force.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from koroku_desktop.domain.recall import MemoryChunk, MemoryMatch
from koroku_desktop.fsutil import atomic_write, exclusive_lock
from koroku_desktop.store.vectors.embed_text import CHUNK_CHARS, chunks
from koroku_desktop.store.vectors.quantise import quantise_all

log = logging.getLogger(__name__)

MAX_FILE_CHUNKS = 200
"""At most this many chunks of one memory file are embedded (about 400,000 characters)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def memory_chunks(file: str, digest: str, text: str) -> list[MemoryChunk]:
    """A memory file's text in pieces of up to `CHUNK_CHARS`: whole entries (paragraphs)
    packed together, a longer entry cut where `embed_text.chunks` cuts."""
    pieces: list[str] = []
    current = ""
    for paragraph in (p.strip() for p in text.split("\n\n")):
        if not paragraph:
            continue
        if len(paragraph) > CHUNK_CHARS:
            if current:
                pieces.append(current)
                current = ""
            pieces.extend(c.text for c in chunks(0, paragraph))
        elif len(current) + len(paragraph) + 2 > CHUNK_CHARS:
            pieces.append(current)
            current = paragraph
        else:
            current = f"{current}\n\n{paragraph}" if current else paragraph
    if current:
        pieces.append(current)
    return [MemoryChunk(file, digest, n, t) for n, t in enumerate(pieces[:MAX_FILE_CHUNKS])]


class MemoryVectors:
    """The vectors of the memory files in `memory_dir`, cached in `index_dir`."""

    def __init__(self, memory_dir: Path, index_dir: Path) -> None:
        self.memory_dir = memory_dir
        self.index_dir = index_dir
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[int, list[dict[str, Any]]]] = {}
        """Entries read per cache file, with the file's mtime when read."""

    def _path(self, model: str, dims: int) -> Path:
        return self.index_dir / f"memory-{_UNSAFE.sub('_', model)}-{dims}.json"

    def _files(self) -> dict[str, str]:
        """The memory files now: name -> text (unreadable ones are skipped with a warning)."""
        found: dict[str, str] = {}
        if not self.memory_dir.is_dir():
            return found
        for path in sorted(self.memory_dir.glob("*.md")):
            try:
                found[path.name] = path.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                log.warning("cannot read memory file %s: %s", path, exc)
        return found

    def _entries(self, model: str, dims: int) -> list[dict[str, Any]]:
        """The stored entries of this space ([] when none or unreadable: re-embedded)."""
        path = self._path(model, dims)
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            return []
        with self._lock:
            cached = self._cache.get(path)
            if cached is not None and cached[0] == mtime:
                return cached[1]
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            entries = data["entries"] if data.get("model") == model else []
            if not isinstance(entries, list):
                raise ValueError("entries is not a list")  # noqa: TRY301 — unreadable, as the rest
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("memory vectors %s unreadable, embedding again: %s", path, exc)
            entries = []
        with self._lock:
            self._cache[path] = (mtime, entries)
        return entries

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with exclusive_lock(self.index_dir / "memory.lock"):
            yield

    def pending(self, model: str, dims: int) -> list[MemoryChunk]:
        """The chunks of memory files that are new or changed since they were embedded;
        the vectors of files that are gone (or changed) are dropped now (a write)."""
        files = {name: (digest(text), text) for name, text in self._files().items()}
        entries = self._entries(model, dims)
        current = {(e["file"], e["hash"]) for e in entries}
        keep = [e for e in entries if files.get(e["file"], ("",))[0] == e["hash"]]
        if len(keep) != len(entries):
            with self._locked():
                self._write(model, dims, keep)
        found: list[MemoryChunk] = []
        for name, (file_hash, text) in files.items():
            if (name, file_hash) not in current:
                found.extend(memory_chunks(name, file_hash, text))
        return found

    def store(
        self, model: str, dims: int, chunks: list[MemoryChunk], vectors: list[list[float]]
    ) -> None:
        """Save the vectors of `chunks` (replacing older ones of the same files)."""
        with self._locked():
            files = {c.file for c in chunks}
            entries = [e for e in self._entries(model, dims) if e["file"] not in files]
            for chunk, (scale, blob) in zip(chunks, quantise_all(vectors), strict=True):
                entries.append(
                    {
                        "file": chunk.file,
                        "hash": chunk.hash,
                        "chunk": chunk.chunk,
                        "text": chunk.text,
                        "scale": scale,
                        "vector": base64.b64encode(blob).decode("ascii"),
                    }
                )
            self._write(model, dims, entries)

    def _write(self, model: str, dims: int, entries: list[dict[str, Any]]) -> None:
        data = {"model": model, "dims": dims, "entries": entries}
        atomic_write(self._path(model, dims), json.dumps(data, ensure_ascii=False))

    def nearest(self, model: str, dims: int, query: list[float], limit: int) -> list[MemoryMatch]:
        """The memory chunks most similar to `query`, best first (files since removed are
        left out; a file edited since keeps its old vectors until it is embedded again)."""
        entries = [e for e in self._entries(model, dims) if (self.memory_dir / e["file"]).is_file()]
        if not entries or limit <= 0:
            return []
        import numpy as np

        from koroku_desktop.store.vectors.index import dot_rows, unit

        matrix = np.frombuffer(
            b"".join(base64.b64decode(e["vector"]) for e in entries), dtype=np.int8
        ).reshape(len(entries), -1)
        if matrix.shape[1] != dims:
            return []
        scales = np.asarray([e["scale"] for e in entries], dtype=np.float32)
        scores = dot_rows(matrix, unit(query)) * scales
        order = np.argsort(-scores)[:limit]
        return [
            MemoryMatch(
                entries[i]["file"], int(entries[i]["chunk"]), entries[i]["text"], float(scores[i])
            )
            for i in order
        ]


def digest(text: str) -> str:
    """The content hash a memory file's vectors are keyed by."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

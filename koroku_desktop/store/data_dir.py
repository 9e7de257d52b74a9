"""The factory of one data dir's SQLite file: its one database and what lives on it.

`data_dir_for(path)` gives this process's one `DataDir` for a file (and mode), shared by every
event log, turn lease and sync ledger opened on it; the last `release` closes its connections.
The full-text index and the vectors are made here once, on first use (after the log has
migrated the file), never by the event log itself.
"""

from __future__ import annotations

import threading
from pathlib import Path

from koroku_desktop.store.database import KorokuDatabase
from koroku_desktop.store.search.index import SearchIndex
from koroku_desktop.store.vectors.store import INDEX_FOLDER, VectorStore


class DataDir:
    """One SQLite file's database, its search index and its vectors, each made once."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.database = KorokuDatabase(self.path, read_only=read_only)
        self.users = 0
        self._made = threading.Lock()
        self._index: SearchIndex | None = None
        self._vectors: VectorStore | None = None

    def index(self) -> SearchIndex:
        """The full-text index (store/search/index.py) of this file."""
        with self._made:
            if self._index is None:
                self._index = SearchIndex(self.database)
            return self._index

    def vectors(self) -> VectorStore:
        """Embeddings of the log and the hybrid search's reads (store/vectors/store.py)."""
        index = self.index()
        with self._made:
            if self._vectors is None:
                folder = self.path.parent / INDEX_FOLDER
                self._vectors = VectorStore(self.database, index, folder)
            return self._vectors


_SHARED: dict[tuple[Path, bool], DataDir] = {}
_SHARED_LOCK = threading.Lock()


def data_dir_for(path: Path, *, read_only: bool = False) -> DataDir:
    """The one `DataDir` of `path` in this process (opened on first use); pair with `release`.

    The event log, the turn lease and the sync ledger of a data dir share it, so there is one
    connection per thread to the file and one policy for all of them.
    """
    key = (Path(path).resolve(), read_only)
    with _SHARED_LOCK:
        found = _SHARED.get(key)
        if found is None:
            found = _SHARED[key] = DataDir(Path(path), read_only=read_only)
        found.users += 1
        return found


def release(data_dir: DataDir) -> None:
    """One user is done with `data_dir`; the last one closes every connection to it."""
    with _SHARED_LOCK:
        data_dir.users -= 1
        if data_dir.users > 0:
            return
        key = (data_dir.path.resolve(), data_dir.read_only)
        if _SHARED.get(key) is data_dir:
            del _SHARED[key]
    data_dir.database.close_all()

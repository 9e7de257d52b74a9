"""The persisted vector index: written next to the log (private), mapped by a new store,
appended incrementally, checked against the table and rebuilt when stale or damaged; a
read-only store maps it without writing anything."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import numpy as np
import pytest

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.domain.recall import Chunk, EmbeddingBatch
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.vectors import index as vector_index
from koroku_desktop.store.vectors.index import CANDIDATES
from koroku_desktop.store.vectors.store import INDEX_FOLDER

MODEL, DIMS = "m", 64


def _vector(n: int) -> list[float]:
    return [float(x) for x in np.random.default_rng(n).standard_normal(DIMS)]


def _embed(log: SqliteEventLog, count: int, start: int = 0) -> list[int]:
    """`count` new events with vector `_vector(start + i)` each; their seqs."""
    events = [
        MessageEvent(role="user", parts=[TextPart(text=f"note {start + i}")]) for i in range(count)
    ]
    seqs = [s.seq for s in log.append("default", events)]
    batch = EmbeddingBatch([Chunk(s, 0, "x") for s in seqs], seqs[-1], len(seqs))
    log.vectors.store(MODEL, DIMS, batch, [_vector(start + i) for i in range(count)])
    return seqs


def _best(log: SqliteEventLog, n: int) -> int:
    return log.vectors.nearest(MODEL, DIMS, _vector(n), 1)[0].seq


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "koroku.db"


def _folder(path: Path) -> Path:
    (folder,) = (path.parent / INDEX_FOLDER).iterdir()
    return folder


def test_a_new_store_maps_the_files_and_appends_new_rows(path: Path) -> None:
    log = SqliteEventLog(path)
    seqs = _embed(log, 30)
    assert _best(log, 7) == seqs[7]
    folder = _folder(path)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    for file in folder.iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file.name
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["rows"] == 30 and meta["model"] == MODEL and meta["dims"] == DIMS

    other = SqliteEventLog(path)  # another process: maps what is there
    more = _embed(other, 5, start=30)
    assert _best(other, 32) == more[2] and _best(other, 3) == seqs[3]
    assert json.loads((folder / "meta.json").read_text())["rows"] == 35
    assert (folder / "vectors.i8").stat().st_size == 35 * DIMS
    # The first store sees the rows the other appended (to the files and to the table).
    assert _best(log, 34) == more[4]
    assert json.loads((folder / "meta.json").read_text())["generation"] == meta["generation"]
    other.close()
    log.close()


def test_damaged_or_stale_files_are_rebuilt(path: Path) -> None:
    log = SqliteEventLog(path)
    seqs = _embed(log, 20)
    _best(log, 0)
    log.close()
    folder = _folder(path)
    generation = json.loads((folder / "meta.json").read_text())["generation"]

    (folder / "meta.json").write_text("{not json")
    log = SqliteEventLog(path)
    assert _best(log, 11) == seqs[11]
    log.close()
    rebuilt = json.loads((folder / "meta.json").read_text())
    assert rebuilt["rows"] == 20 and rebuilt["generation"] != generation

    with open(folder / "vectors.i8", "r+b") as f:  # shorter than the meta says
        f.truncate(5 * DIMS)
    log = SqliteEventLog(path)
    assert _best(log, 12) == seqs[12]
    log.close()

    # The table changed under the files (a row replaced): the count/last row no longer match.
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM event_vectors WHERE seq = ?", (seqs[-1],))
    conn.commit()
    conn.close()
    log = SqliteEventLog(path)
    assert all(m.seq != seqs[-1] for m in log.vectors.nearest(MODEL, DIMS, _vector(19), 3))
    assert json.loads((folder / "meta.json").read_text())["rows"] == 19
    log.close()


def test_a_crash_mid_append_is_cut_off(path: Path) -> None:
    log = SqliteEventLog(path)
    _embed(log, 10)
    _best(log, 0)
    folder = _folder(path)
    with open(folder / "seqs.i64", "ab") as f:  # written, but the meta never said so
        f.write(b"\xff" * 24)
    more = _embed(log, 3, start=10)
    assert _best(log, 11) == more[1]
    assert (folder / "seqs.i64").stat().st_size == 13 * 8
    assert np.fromfile(folder / "seqs.i64", np.int64)[-3:].tolist() == more
    log.close()


def test_a_read_only_store_maps_the_files_and_writes_nothing(path: Path, tmp_path: Path) -> None:
    log = SqliteEventLog(path)
    seqs = _embed(log, 10)
    reader = SqliteEventLog(path, read_only=True)
    assert _best(reader, 4) == seqs[4]  # no files yet: read from the table
    assert not (path.parent / INDEX_FOLDER).exists()
    reader.close()

    _best(log, 0)  # a writable store persists the index
    more = _embed(log, 4, start=10)  # and newer rows the files do not hold yet
    before = {f.name: f.stat().st_mtime_ns for f in _folder(path).iterdir()}
    reader = SqliteEventLog(path, read_only=True)
    assert _best(reader, 2) == seqs[2] and _best(reader, 12) == more[2]
    assert {f.name: f.stat().st_mtime_ns for f in _folder(path).iterdir()} == before
    reader.close()
    log.close()


def test_a_large_persisted_index_still_finds_the_planted_neighbour(path: Path) -> None:
    log = SqliteEventLog(path)
    seqs = _embed(log, CANDIDATES + 500)
    log.close()
    log = SqliteEventLog(path)
    assert _best(log, 1234) == seqs[1234]
    log.close()
    log = SqliteEventLog(path)  # mapped this time
    assert _best(log, 2345) == seqs[2345]
    assert all(
        m.seq < seqs[100] for m in log.vectors.nearest(MODEL, DIMS, _vector(2345), 5, seqs[100])
    )
    log.close()


def test_a_model_change_drops_the_old_space_files(path: Path) -> None:
    log = SqliteEventLog(path)
    seqs = _embed(log, 5)
    _best(log, 0)
    old = _folder(path)
    batch = EmbeddingBatch([Chunk(s, 0, "x") for s in seqs], seqs[-1], len(seqs))
    log.vectors.store("new-model", DIMS, batch, [_vector(i) for i in range(5)])
    assert not old.exists()
    assert log.vectors.nearest("new-model", DIMS, _vector(3), 1)[0].seq == seqs[3]
    log.close()


def test_a_first_load_in_pages_gives_the_same_index(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_index, "PAGE_ROWS", 7)
    log = SqliteEventLog(path)
    seqs = _embed(log, 40)
    log.close()
    reader = SqliteEventLog(path, read_only=True)  # in memory, page by page
    assert [_best(reader, n) for n in (0, 13, 39)] == [seqs[0], seqs[13], seqs[39]]
    reader.close()
    log = SqliteEventLog(path)  # into the files, page by page
    assert [_best(log, n) for n in (0, 13, 39)] == [seqs[0], seqs[13], seqs[39]]
    assert json.loads((_folder(path) / "meta.json").read_text())["rows"] == 40
    assert np.fromfile(_folder(path) / "seqs.i64", np.int64).tolist() == seqs
    log.close()

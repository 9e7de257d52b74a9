"""The content-addressed blob store: one copy per content, private files, checked reads."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from koroku_desktop.blobs.blob_store import BlobStore, MissingBlob, sha256_of


def test_put_keeps_one_private_copy_named_by_its_hash(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    first = blobs.put(b"\x89PNG fake image")
    again = blobs.put(b"\x89PNG fake image")
    assert first == again == sha256_of(b"\x89PNG fake image")
    path = blobs.path(first)
    assert path.read_bytes() == b"\x89PNG fake image"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "blobs").stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert list(blobs.shas()) == [first]
    assert blobs.size(first) == len(b"\x89PNG fake image")


def test_read_refuses_a_missing_or_altered_blob(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    name = blobs.put(b"original")
    blobs.path(name).write_bytes(b"tampered")
    with pytest.raises(MissingBlob):
        blobs.read(name)
    with pytest.raises(MissingBlob, match="missing"):
        blobs.read(sha256_of(b"never stored"))
    with pytest.raises(ValueError, match="not a blob name"):
        blobs.path("../../etc/passwd")


class _Source:
    def __init__(self, data: dict[str, bytes]) -> None:
        self.data = data
        self.asked: list[str] = []

    def fetch_blob(self, sha256: str) -> bytes | None:
        self.asked.append(sha256)
        return self.data.get(sha256)


def test_read_fetches_a_blob_from_the_source_once_and_checks_it(tmp_path: Path) -> None:
    wanted, liar = sha256_of(b"from the hub"), sha256_of(b"other")
    source = _Source({wanted: b"from the hub", liar: b"not what the name says"})
    blobs = BlobStore(tmp_path / "blobs", source)
    assert blobs.read(wanted) == b"from the hub"
    assert blobs.read(wanted) == b"from the hub"
    assert source.asked == [wanted]  # kept after the first fetch
    with pytest.raises(MissingBlob):
        blobs.read(liar)
    assert not blobs.has(liar)

"""Koroku's own copy of every attachment: content-addressed files in `<data dir>/blobs/`.

A blob is named by the SHA-256 of its bytes (`blobs/ab/abcdef...`), so the same file attached
twice is stored once, events reference it by hash and stay small, and the next turn (or
another device) gets exactly the same bytes. Files are written atomically with mode 0600 in
folders of mode 0700. Blobs are never changed or removed by the app: like the event log,
they only grow.

A `BlobSource` (e.g. the sync hub) may be attached: `read` asks it for a blob this device does
not have yet, keeps the copy, and checks its hash before trusting it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from koroku_desktop.fsutil import PRIVATE, atomic_write

_SHA256 = re.compile(r"[0-9a-f]{64}")


class MissingBlob(LookupError):
    """No copy of this blob here (and no source had it): the attachment cannot be sent."""

    def __init__(self, sha256: str) -> None:
        super().__init__(f"attachment {sha256[:12]}… is missing from the blob store")
        self.sha256 = sha256


class BlobSource(Protocol):
    """Somewhere else a blob may be fetched from when this device lacks it."""

    def fetch_blob(self, sha256: str) -> bytes | None:
        """The blob's bytes, or None when the source does not have it either."""
        ...


def sha256_of(data: bytes) -> str:
    """The blob name for these bytes (lower-case hex SHA-256)."""
    return hashlib.sha256(data).hexdigest()


def _check_name(sha256: str) -> str:
    if not _SHA256.fullmatch(sha256):
        raise ValueError(f"not a blob name (64 hex digits): {sha256!r}")
    return sha256


class BlobStore:
    """The content-addressed blob folder of one data dir."""

    def __init__(self, root: Path, source: BlobSource | None = None) -> None:
        self.root = root
        self.source = source

    def path(self, sha256: str) -> Path:
        """Where this blob lives (whether or not it is there)."""
        name = _check_name(sha256)
        return self.root / name[:2] / name

    def put(self, data: bytes) -> str:
        """Keep a copy of `data` (once, whatever the number of calls) and return its hash."""
        name = sha256_of(data)
        target = self.path(name)
        if not target.is_file():
            for folder in (self.root, target.parent):
                folder.mkdir(mode=stat.S_IRWXU, exist_ok=True)
                with contextlib.suppress(OSError):
                    os.chmod(folder, stat.S_IRWXU)
            atomic_write(target, data, mode=PRIVATE)
        return name

    def has(self, sha256: str) -> bool:
        """Whether this device holds the blob."""
        return self.path(sha256).is_file()

    def read(self, sha256: str) -> bytes:
        """The blob's bytes: the local copy, else the source's (kept once its hash checks).

        Raises `MissingBlob` when neither has it, or when a copy does not match its name.
        """
        target = self.path(sha256)
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            fetched = self.source.fetch_blob(sha256) if self.source is not None else None
            if fetched is None or sha256_of(fetched) != sha256:
                raise MissingBlob(sha256) from None
            self.put(fetched)
            return fetched
        if sha256_of(data) != sha256:
            raise MissingBlob(sha256)
        return data

    def size(self, sha256: str) -> int | None:
        """The blob's size in bytes, or None when this device does not hold it."""
        try:
            return self.path(sha256).stat().st_size
        except FileNotFoundError:
            return None

    def shas(self) -> Iterator[str]:
        """Every blob this device holds (in no particular order)."""
        if not self.root.is_dir():
            return
        for folder in self.root.iterdir():
            if not folder.is_dir():
                continue
            for entry in folder.iterdir():
                if _SHA256.fullmatch(entry.name) and entry.name[:2] == folder.name:
                    yield entry.name

"""Writing a file atomically: a temporary file in the same folder, flushed to disk, renamed over.

Readers see the old content or the new one, never half a file, and a failed write leaves the
old file as it was and no temporary file behind. Also: private folders, and a lock file held
exclusively across processes. It sits at the top of the package (like
`xdg.py`) because every layer that writes files needs it: config, tools, runtime and ui.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TextIO

PRIVATE = 0o600
"""The default mode: only the user may read and write (settings, exports, memory files)."""


def _temp_for(path: Path) -> tuple[Path, IO[bytes]]:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    # The kernel applies the umask to 0o666, as for any new file; `mode` is set afterwards.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    return tmp, os.fdopen(fd, "wb")


def _existing_mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def _replacing(path: Path, mode: int | None, keep_mode: bool) -> Iterator[IO[bytes]]:
    """A new temporary file next to `path`, synced and renamed over it when the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = _existing_mode(path) if keep_mode else None
    chosen = existing if existing is not None else mode
    tmp, out = _temp_for(path)
    try:
        with out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        if chosen is not None:
            os.chmod(tmp, chosen)
        os.replace(tmp, path)
    except BaseException:
        out.close()
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_writer(
    path: Path, *, mode: int | None = PRIVATE, keep_mode: bool = False
) -> Iterator[TextIO]:
    """A UTF-8 text stream whose content replaces `path` when the block ends cleanly.

    `mode`: the file's permission bits (default 0o600; None: 0o666 minus the umask, as for
    any new file). `keep_mode`: an existing file keeps its own bits. Missing parent folders
    are created. On an exception the temporary file is removed and `path` is untouched.
    """
    with _replacing(path, mode, keep_mode) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8")
        try:
            yield text
        finally:
            text.detach()  # flushes; `_replacing` syncs and closes the file itself


def atomic_write(
    path: Path, data: str | bytes, *, mode: int | None = PRIVATE, keep_mode: bool = False
) -> None:
    """Replace `path` with `data` (str: UTF-8) atomically; modes as in `atomic_writer`."""
    with _replacing(path, mode, keep_mode) as out:
        out.write(data.encode("utf-8") if isinstance(data, str) else data)


def private_dir(folder: Path) -> None:
    """Create `folder` and any missing parents as 0700 (the umask does not widen them)."""
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)


@contextlib.contextmanager
def exclusive_lock(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on `lock_file` (created 0600, in a private folder) across
    processes, waiting for it; closing the file releases it."""
    held = _lock(lock_file, fcntl.LOCK_EX)
    assert held is not None  # a blocking flock waits rather than refuse
    try:
        yield
    finally:
        held.release()


class HeldLock:
    """An exclusive lock on a file, held until `release` (or until the process ends)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def release(self) -> None:
        """Give the lock back (closing the file releases it); twice is harmless."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def try_exclusive_lock(lock_file: Path) -> HeldLock | None:
    """Take an exclusive lock on `lock_file` (created 0600, in a private folder) without
    waiting; None when another open file (another process, or this one) holds it."""
    return _lock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _lock(lock_file: Path, operation: int) -> HeldLock | None:
    private_dir(lock_file.parent)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, operation)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return HeldLock(fd)

"""AttachmentStore: files in and out of the blob store, for every front end.

A file is read and checked (`check_attachment`: type from the content, size) before anything
is kept, so a refused file leaves no trace; `keep` stores the bytes content-addressed and
returns the part an event carries. `open_copy` gives a viewer application a private temporary
copy, so the original may be gone and the blob itself is never handed out for writing. The
copies go when the process closes (`discard_copies`); those of a process that died are swept
by the next one that opens a copy.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from koroku_desktop.blobs.blob_store import BlobStore, MissingBlob
from koroku_desktop.domain.attachment import (
    AttachmentRefused,
    PendingAttachment,
    check_attachment,
)
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.fsutil import PRIVATE, atomic_write
from koroku_desktop.render.blocks import AttachmentBlock
from koroku_desktop.render.markdown import AttachmentLink
from koroku_desktop.store.local_lease import pid_alive

_UNSAFE = re.compile(r"[^\w.\- ()\[\]+,@]+")


def safe_file_name(name: str, fallback: str = "attachment") -> str:
    """`name` fit for a file in a folder of ours: no path, no control or odd characters."""
    base = os.path.basename(name.replace("\\", "/")).strip().lstrip(".")
    cleaned = _UNSAFE.sub("_", base)[:120].strip()
    return cleaned or fallback


def read_attachment_file(path: Path) -> PendingAttachment:
    """Read and check a file to attach; `AttachmentRefused` names it when it cannot be."""
    try:
        if path.is_dir():
            raise AttachmentRefused(f"{path} is a folder, not a file.")
        data = path.read_bytes()
    except FileNotFoundError:
        raise AttachmentRefused(f"{path}: no such file.") from None
    except PermissionError:
        raise AttachmentRefused(f"{path} cannot be read (permission denied).") from None
    except OSError as exc:
        raise AttachmentRefused(f"{path} cannot be read ({exc.strerror or exc}).") from None
    try:
        return check_attachment(data, path.name)
    except AttachmentRefused as exc:
        raise AttachmentRefused(str(exc).replace(path.name, str(path), 1)) from None


COPIES = "koroku-attachments-"
"""The temporary folders of opened copies: `koroku-attachments-<pid>-<random>`."""
OLD_COPIES_S = 86_400.0


def sweep_copies(root: Path | None) -> int:
    """Remove the copy folders of processes that are gone (and, from versions that did not
    name the pid, those a day old); only folders of this user. Returns how many."""
    swept = 0
    folder = root if root is not None else Path(tempfile.gettempdir())
    for path in folder.glob(f"{COPIES}*"):
        try:
            info = path.lstat()
            mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            if not mine or not _left_behind(path.name[len(COPIES) :], info.st_mtime):
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        swept += 1
    return swept


def _left_behind(suffix: str, modified: float) -> bool:
    """Whether a copy folder named `koroku-attachments-<suffix>` belongs to no live process."""
    pid, dash, _ = suffix.partition("-")
    if dash and pid.isdigit():
        return not pid_alive(int(pid))
    return time.time() - modified > OLD_COPIES_S


class AttachmentStore:
    """Keeps attachments in the blob store and reads them back."""

    def __init__(self, blobs: BlobStore, temp_root: Path | None = None) -> None:
        self.blobs = blobs
        self._temp_root = temp_root
        self._temp: Path | None = None

    def keep(self, pending: PendingAttachment) -> AttachmentPart:
        """Store the bytes (once per content) and return the part that references them."""
        return pending.part(self.blobs.put(pending.data))

    def read(self, sha256: str) -> bytes:
        """The bytes of a stored attachment; raises `MissingBlob` when this device lacks them."""
        return self.blobs.read(sha256)

    def has(self, sha256: str) -> bool:
        """Whether this device holds the attachment's bytes."""
        return self.blobs.has(sha256)

    def path(self, sha256: str) -> Path:
        """Where the blob lives (read-only use: links in an export)."""
        return self.blobs.path(sha256)

    def open_copy(self, part: AttachmentPart) -> Path:
        """A private temporary copy named like the original, to open in another application."""
        data = self.read(part.sha256)
        if self._temp is None:
            root = self._temp_root
            if root is not None:
                root.mkdir(parents=True, exist_ok=True)
            sweep_copies(root)
            self._temp = Path(tempfile.mkdtemp(prefix=f"{COPIES}{os.getpid()}-", dir=root))
        folder = self._temp / part.sha256[:12]
        folder.mkdir(mode=0o700, exist_ok=True)
        target = folder / safe_file_name(part.name)
        atomic_write(target, data, mode=PRIVATE)
        return target

    def discard_copies(self) -> None:
        """Remove this process's temporary copies (when it closes)."""
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None

    def blob_links(self) -> AttachmentLink:
        """Markdown links to the blobs themselves (`file://` URLs): an export on stdout."""

        def link(block: AttachmentBlock) -> str | None:
            if block.sha256 is None or not self.has(block.sha256):
                return None
            return self.path(block.sha256).resolve().as_uri()

        return link

    def copied_links(self, folder: Path, relative_to: Path) -> AttachmentLink:
        """Markdown links to copies in `folder` (made as linked), relative to `relative_to`.

        A Markdown export file gets its attachments in a folder beside it, so the document
        and its files can be moved, shared or opened on another machine together.
        """

        def link(block: AttachmentBlock) -> str | None:
            if block.sha256 is None:
                return None
            try:
                data = self.read(block.sha256)
            except MissingBlob:
                return None
            name = f"{block.sha256[:12]}-{safe_file_name(block.name)}"
            target = folder / name
            if not target.is_file():
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                atomic_write(target, data, mode=PRIVATE)
            return quote(os.path.relpath(target, relative_to))

        return link


__all__ = [
    "AttachmentRefused",
    "AttachmentStore",
    "MissingBlob",
    "PendingAttachment",
    "read_attachment_file",
    "safe_file_name",
]

"""`koroku import` of another assistant's export: recognise it, check it whole, then write it
chat by chat (see foreign_import.py for how a chat becomes events).

Importing is total: the file is first read through once (incrementally) and every chat
converted, so a damaged or foreign file is refused in one line before anything is written;
then it is read again and each chat written in its own transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.maintenance.chatgpt_export import read_chatgpt
from koroku_desktop.maintenance.claude_export import read_claude
from koroku_desktop.maintenance.foreign_files import ExportFiles, detect
from koroku_desktop.maintenance.foreign_import import (
    ForeignChat,
    ForeignFormatError,
    ForeignReport,
    Progress,
    Source,
    import_chats,
)
from koroku_desktop.store import SqliteEventLog

__all__ = ["ForeignFormatError", "check_export", "detect", "import_other_assistant"]


def _chats(path: Path, source: Source, files: ExportFiles | None) -> Iterator[ForeignChat]:
    return read_chatgpt(path, files) if source == "chatgpt" else read_claude(path)


def check_export(path: Path, source: Source) -> int:
    """Read the whole export once, converting every chat, without writing anything; return
    how many chats it has. Raises `ForeignFormatError` (one line) when any part is damaged."""
    count = 0
    try:
        for _chat in _chats(path, source, None):
            count += 1
    except ForeignFormatError as exc:
        where = "" if str(exc).startswith(path.name) else f"{path.name}: "
        raise ForeignFormatError(f"{where}{exc}") from None
    if count == 0:
        raise ForeignFormatError(f"{path.name} holds no conversations")
    return count


def import_other_assistant(
    log: SqliteEventLog,
    path: Path,
    source: Source,
    *,
    import_time: float,
    blobs_dir: Path | None = None,
    progress: Progress | None = None,
    checked: bool = False,
) -> ForeignReport:
    """Import ChatGPT's or Claude's export at `path` (checked first with `check_export`);
    the files it holds go into the blob store at `blobs_dir` (None: all shown as missing).
    `checked`: the caller has run `check_export` already."""
    if not checked:
        check_export(path, source)
    blobs = BlobStore(blobs_dir) if blobs_dir is not None else None
    files = ExportFiles(path) if blobs is not None and source == "chatgpt" else None
    try:
        return import_chats(
            log,
            _chats(path, source, files),
            source,
            import_time=import_time,
            blobs=blobs,
            progress=progress,
        )
    finally:
        if files is not None:
            files.close()

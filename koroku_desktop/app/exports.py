"""The `koroku export` formats, written to a stream or atomically to a file: the whole log,
one conversation, or a conversation's live context, as Markdown or JSON, with the attached
files."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from koroku_desktop.blobs.attachments import AttachmentStore
from koroku_desktop.fsutil import atomic_writer
from koroku_desktop.render.markdown import write_markdown
from koroku_desktop.store import SqliteEventLog


def write_log_export(
    event_log: SqliteEventLog,
    conversation_id: str,
    fmt: str,
    live: bool,
    out: TextIO,
    attachments: AttachmentStore | None = None,
    path: Path | None = None,
    *,
    one: bool = False,
) -> int:
    """The `koroku export` formats: the whole log, only `conversation_id` (`one`), or its
    live context (`live`), as Markdown or JSON.

    JSON carries the attached files (base64, restored by an import). Markdown written to
    `path` links copies in a `<name>.files/` folder beside it (the document travels with its
    files); on stdout it links the blobs themselves.
    """
    from koroku_desktop.maintenance.portable import exported_entries, write_export

    chosen = conversation_id if live or one else None
    entries = exported_entries(event_log, chosen, live=live)
    scope: Any = "live" if live else ("conversation" if one else "all")
    if fmt == "json":
        reader = None if attachments is None else attachments.read
        return write_export(out, entries, scope=scope, exported_at=time.time(), blobs=reader)
    link = None
    if attachments is not None:
        link = (
            attachments.blob_links()
            if path is None
            else attachments.copied_links(path.parent / f"{path.name}.files", path.parent)
        )
    return write_markdown(out, entries, live=live, link=link)


def export_file(
    event_log: SqliteEventLog,
    conversation_id: str,
    fmt: str,
    live: bool,
    path: Path,
    attachments: AttachmentStore | None = None,
    *,
    one: bool = False,
) -> int:
    """Write an export (see `write_log_export`) to `path` atomically (temp file, then
    rename); return how many events."""
    if not path.parent.is_dir():  # folders Koroku creates for an export are private
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
    with atomic_writer(path) as out:
        return write_log_export(
            event_log, conversation_id, fmt, live, out, attachments, path, one=one
        )


def export_writer(
    event_log: SqliteEventLog, talked_in: str, attachments: AttachmentStore | None = None
) -> Callable[[str, bool, Path, str | None], int]:
    """The viewer's Export… as `export_file`: (format, live, path, conversation) writes one
    conversation (`koroku export -c`), every one (None), or a live context (the conversation
    given, else `talked_in`); returns how many events."""

    def export(fmt: str, live: bool, path: Path, conversation: str | None) -> int:
        one = conversation is not None and not live
        chosen = conversation or talked_in
        return export_file(event_log, chosen, fmt, live, path, attachments, one=one)

    return export

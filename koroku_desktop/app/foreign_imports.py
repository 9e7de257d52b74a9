"""Importing another assistant's export into the data dir's log, without the rest of the
runtime: no conversation is chosen or started by an import (its chats are read-only until
continued, so a runtime opened over them alone would start an empty one)."""

from __future__ import annotations

import time
from pathlib import Path

from koroku_desktop.app.config import Paths, default_paths
from koroku_desktop.domain.ids import writer_name
from koroku_desktop.maintenance.foreign_import import ForeignReport, Progress, Source
from koroku_desktop.maintenance.other_assistants import import_other_assistant
from koroku_desktop.store.db_errors import open_event_log


def import_into_data_dir(
    path: Path, source: Source, *, progress: Progress | None = None, paths: Paths | None = None
) -> ForeignReport:
    """Import the export at `path` (already checked whole) into the data dir: its events
    into the log, its files into the blob store. Raises `DatabaseUnavailable` when the log
    cannot be opened, the store's errors when a write fails (nothing of that chat written)."""
    paths = paths or default_paths()
    log = open_event_log(paths.db, writer=writer_name("import"))
    try:
        return import_other_assistant(
            log,
            path,
            source,
            import_time=time.time(),
            blobs_dir=paths.blobs,
            progress=progress,
            checked=True,
        )
    finally:
        log.close()

"""Importing a file into the data dir's log, as `koroku import` and the viewer's Import… do:
a Koroku JSON export, or ChatGPT's or Claude's data export (`conversations.json` or the zip).

A Koroku export of the whole log goes into an empty log only, every event at its seq
(maintenance/portable.py); an export of one conversation is merged into any log
(maintenance/portable_merge.py). Another assistant's export is checked whole first, then
written chat by chat (app/foreign_imports.py). Blocking: run it in a worker thread. A cancel
stops before the conversation being written (nothing half-imported); a damaged or foreign
file is one `ImportRefused` line, with nothing written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from koroku_desktop.app.config import Paths, default_paths
from koroku_desktop.app.foreign_imports import import_into_data_dir
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.domain.conversations import origin_name
from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.domain.ids import writer_name
from koroku_desktop.domain.projection import Fix
from koroku_desktop.maintenance.foreign_import import ForeignReport, Source, summary
from koroku_desktop.maintenance.other_assistants import (
    ForeignFormatError,
    check_export,
    detect,
)
from koroku_desktop.maintenance.portable import (
    ExportContents,
    ExportFormatError,
    LogNotEmptyError,
    import_contents,
    read_export_contents,
    sniff,
)
from koroku_desktop.maintenance.portable_merge import ImportCancelled, merge_export
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.db_errors import open_event_log

__all__ = [
    "ImportCancelled",
    "ImportOutcome",
    "ImportRefused",
    "Progress",
    "WholeLogRefused",
    "import_file",
    "import_koroku",
    "importer_for",
]

Progress = Callable[[int, int, str], None]
"""Called with how much is done, of how much (0: not known yet), and what is being done."""


class ImportRefused(KorokuError, ValueError):
    """The file cannot be imported (damaged, not an export); the message is the one line to
    show. Nothing was written."""


class WholeLogRefused(ImportRefused):
    """A whole log's export goes into an empty data dir only (this one has events)."""


@dataclass(frozen=True)
class ImportOutcome:
    """What an import did, in one line."""

    line: str
    repairs: list[Fix] = field(default_factory=list)
    """Call/response problems an imported whole log has (each request repairs them)."""


def import_koroku(
    log: SqliteEventLog,
    path: Path,
    blobs: BlobStore | None,
    *,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> ImportOutcome:
    """A Koroku JSON export into `log`: a whole log into an empty one (event for event), one
    conversation into any (merged, idempotent). Raises `ImportRefused` or `ImportCancelled`."""
    try:
        contents = read_export_contents(path)
    except ExportFormatError as exc:
        raise ImportRefused(f"{exc} (nothing imported)") from None
    if log.count() == 0:
        whole = _import_whole(log, contents, blobs, cancelled)
        if whole is not None:
            return whole
    if contents.scope != "conversation":
        raise WholeLogRefused(
            f"{path.name} is an export of a whole log: it goes into an empty data dir only "
            "(export one conversation with `koroku export -c` to bring it in here); "
            "nothing imported"
        )

    def step(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total, "events")

    merged = merge_export(log, contents, blobs, progress=step, cancelled=cancelled)
    known = f", {merged.known:,} already here" if merged.known else ""
    damaged = f", {merged.damaged:,} damaged left out" if merged.damaged else ""
    return ImportOutcome(
        f"imported {merged.imported:,} event(s) of {len(merged.conversations)} "
        f"conversation(s) from a Koroku export{known}{damaged}"
    )


def _import_whole(
    log: SqliteEventLog,
    contents: ExportContents,
    blobs: BlobStore | None,
    cancelled: Callable[[], bool] | None,
) -> ImportOutcome | None:
    """Into an empty log, event for event (None: another process wrote first, and a
    conversation's export is then merged)."""
    if cancelled is not None and cancelled():
        raise ImportCancelled("import stopped; nothing was imported")
    try:
        done = import_contents(log, contents, blobs)
    except LogNotEmptyError as exc:  # another process wrote meanwhile
        if contents.scope == "conversation":
            return None
        raise WholeLogRefused(f"{exc} (nothing imported)") from None
    span = f" (#{done.first_seq}–#{done.last_seq})" if done.imported else ""
    return ImportOutcome(
        f"imported {done.imported:,} event(s) from a Koroku export{span}", done.repairs
    )


def import_file(
    path: Path,
    *,
    paths: Paths | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> ImportOutcome:
    """Import the file at `path` into the data dir, whatever it is of the exports Koroku
    reads (see the module doc). Raises `ImportRefused`, `ImportCancelled`, or the store's
    errors (`DatabaseUnavailable`, a write that failed: nothing of that conversation kept)."""
    paths = paths or default_paths()
    if not path.is_file():
        raise ImportRefused(f"no such file: {path}")
    found = sniff(path)
    if found == "export":
        log = open_event_log(paths.db, writer=writer_name("import"))
        try:
            return import_koroku(
                log, path, BlobStore(paths.blobs), progress=progress, cancelled=cancelled
            )
        finally:
            log.close()
    source = detect(path) if found == "unknown" else None
    if source is None:
        raise ImportRefused(
            f"{path.name} is not a Koroku export or ChatGPT's or Claude's data export "
            "(expected a JSON file from Koroku's Export…, or an export's conversations.json "
            "or zip); nothing imported"
        )
    return _import_foreign(path, source, paths, progress, cancelled)


def _import_foreign(
    path: Path,
    source: Source,
    paths: Paths,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> ImportOutcome:
    name = origin_name(source)
    if progress is not None:
        progress(0, 0, f"reading {name}'s export")
    try:
        total = check_export(path, source)
    except ForeignFormatError as exc:
        raise ImportRefused(f"{exc} (nothing imported)") from None

    def step(done: int, _report: ForeignReport) -> None:
        if progress is not None:
            progress(done, total, f"{name} conversations")
        if cancelled is not None and cancelled() and done < total:
            raise ImportCancelled(
                f"import stopped after {done:,} of {total:,} conversations; each one "
                "brought in is whole (import again to bring in the rest)"
            )

    if cancelled is not None and cancelled():
        raise ImportCancelled("import stopped; nothing was imported")
    try:
        report = import_into_data_dir(path, source, progress=step, paths=paths)
    except ForeignFormatError as exc:  # changed while being read
        raise ImportRefused(f"{exc} (nothing more imported)") from None
    return ImportOutcome(summary(report))


def importer_for(
    paths: Paths,
) -> Callable[[Path, Progress, Callable[[], bool]], ImportOutcome]:
    """`import_file` into the data dir at `paths`: what the viewer's Import… runs."""

    def run(path: Path, progress: Progress, cancelled: Callable[[], bool]) -> ImportOutcome:
        return import_file(path, paths=paths, progress=progress, cancelled=cancelled)

    return run

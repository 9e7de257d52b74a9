"""`koroku import` of ChatGPT's or Claude's data export: every chat a conversation.

The export is checked whole first, then imported into the log alone (no conversation is
chosen or started). Progress goes to stderr; a damaged or foreign file is one line and
exit 2 with nothing written; Ctrl-C stops between chats (each chat is written whole, so
running the import again finishes it). Afterwards the imported history is embedded for
search by meaning when there is a key (otherwise the app or the next search does it);
keywords find it at once.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from koroku_desktop.app.config import default_paths
from koroku_desktop.app.foreign_imports import import_into_data_dir
from koroku_desktop.app.runtime import DB_ERRORS, DatabaseUnavailable
from koroku_desktop.cli.db_failure import database_failed
from koroku_desktop.cli.recall_commands import embed_imported
from koroku_desktop.cli.refusal import refused
from koroku_desktop.cli.session import CliExit, open_runtime
from koroku_desktop.cli.terminal import TerminalApprover
from koroku_desktop.domain.conversations import origin_name
from koroku_desktop.maintenance.foreign_import import ForeignReport, Progress, Source, summary
from koroku_desktop.maintenance.other_assistants import ForeignFormatError, check_export

PROGRESS_EVERY_SECONDS = 0.5


def import_foreign_export(path: Path, source: Source) -> int:
    """Import `path` (already recognised as `source`'s export); the exit status."""
    total = _checked(path, source)
    if total is None:
        return 2
    paths = default_paths()
    try:
        report = import_into_data_dir(path, source, progress=_progress(total), paths=paths)
    except ForeignFormatError as exc:  # changed while being read
        return refused("import", exc)
    except KeyboardInterrupt:
        print(
            "koroku import: stopped; every conversation written so far is whole "
            "(run the import again to bring in the rest)",
            file=sys.stderr,
        )
        return 130
    except DatabaseUnavailable as exc:
        print(f"koroku: {exc}", file=sys.stderr)
        return 1
    except DB_ERRORS as exc:
        return database_failed(exc, paths.db)
    print(summary(report))
    if report.messages and report.last_conversation is not None:
        return _embed(report.last_conversation)
    return 0


def _embed(conversation: str) -> int:
    """Embed the imported history now when there is a key (the runtime opens on an imported
    chat, so none is started for it)."""
    try:
        with open_runtime(TerminalApprover(), need_key=False, conversation=conversation) as runtime:
            if runtime.model.has_key:
                asyncio.run(embed_imported(runtime))
    except CliExit as exc:
        return exc.code
    return 0


def _checked(path: Path, source: Source) -> int | None:
    """How many chats the export has, read through whole first (None: refused, said why)."""
    try:
        total = check_export(path, source)
    except ForeignFormatError as exc:
        print(f"koroku import: {exc} (nothing imported)", file=sys.stderr)
        return None
    print(
        f"koroku import: {origin_name(source)} export with {total:,} conversation(s)",
        file=sys.stderr,
        flush=True,
    )
    return total


def _progress(total: int) -> Progress:
    """Progress on stderr: the first chat, then at most twice a second, and the last."""
    shown = [0.0]

    def progress(done: int, report: ForeignReport) -> None:
        now = time.monotonic()
        if done in (1, total) or now - shown[0] >= PROGRESS_EVERY_SECONDS:
            shown[0] = now
            print(
                f"koroku import: {done:,} of {total:,} conversations, "
                f"{report.messages:,} new message(s)",
                file=sys.stderr,
                flush=True,
            )

    return progress

"""`koroku import` of ChatGPT's or Claude's data export: every chat a conversation.

Progress goes to stderr; a damaged or foreign file is one line and exit 2 with nothing
written; Ctrl-C stops between chats (each chat is written whole, so running the import again
finishes it). Afterwards the imported history is embedded for search by meaning when there
is a key (otherwise the app or the next search does it); keywords find it at once.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from koroku_desktop.cli.recall_commands import embed_imported
from koroku_desktop.cli.session import CliExit, open_runtime
from koroku_desktop.cli.terminal import TerminalApprover
from koroku_desktop.domain.conversations import origin_name
from koroku_desktop.maintenance.foreign_import import ForeignReport, Progress, Source, summary
from koroku_desktop.maintenance.other_assistants import (
    ForeignFormatError,
    check_export,
    import_other_assistant,
)

PROGRESS_EVERY_SECONDS = 0.5


def import_foreign_export(path: Path, source: Source) -> int:
    """Import `path` (already recognised as `source`'s export); the exit status."""
    try:
        with open_runtime(TerminalApprover(), need_key=False) as runtime:
            total = _checked(path, source)
            if total is None:
                return 2
            progress = _progress(total)
            try:
                report = import_other_assistant(
                    runtime.log,
                    path,
                    source,
                    import_time=time.time(),
                    blobs_dir=runtime.paths.blobs,
                    progress=progress,
                    checked=True,
                )
            except ForeignFormatError as exc:  # changed while being read
                print(f"koroku import: {exc}", file=sys.stderr)
                return 2
            except KeyboardInterrupt:
                print(
                    "koroku import: stopped; every conversation written so far is whole "
                    "(run the import again to bring in the rest)",
                    file=sys.stderr,
                )
                return 130
            print(summary(report))
            if report.messages:
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

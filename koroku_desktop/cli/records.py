"""`koroku import`: bringing a record in (a Koroku export, a tutorial database, another
assistant's export)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from koroku_desktop.app.runtime import import_tutorial
from koroku_desktop.cli.foreign_import_command import import_foreign_export
from koroku_desktop.cli.recall_commands import (
    compact_long_history,
    import_koroku_export,
    print_repairs,
)
from koroku_desktop.cli.session import CliExit, open_runtime
from koroku_desktop.cli.terminal import TerminalApprover
from koroku_desktop.maintenance.other_assistants import detect
from koroku_desktop.maintenance.portable import sniff


def register(sub: Any) -> None:
    """Add `koroku import`."""
    imp = sub.add_parser(
        "import",
        help="import a Koroku JSON export, a tutorial SessionManager database, or ChatGPT's "
        "or Claude's data export (conversations.json or the export zip)",
    )
    imp.add_argument("path", type=Path)
    imp.set_defaults(handler=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    """Import a database written by the tutorial's SessionManager."""
    if not args.path.is_file():
        print(f"koroku import: no such file: {args.path}", file=sys.stderr)
        return 2
    found = sniff(args.path)
    if found == "unknown":
        other = detect(args.path)
        if other is not None:
            return import_foreign_export(args.path, other)
        print(
            f"koroku import: {args.path} is not a Koroku export, a tutorial database or "
            "ChatGPT's or Claude's data export (expected a JSON file from `koroku export "
            "--format json`, a SQLite file, or an export's conversations.json or zip)",
            file=sys.stderr,
        )
        return 2
    if found == "export":
        return import_koroku_export(args.path)
    try:
        with open_runtime(TerminalApprover(), need_key=False) as runtime:
            report = import_tutorial(runtime, args.path)
    except CliExit as exc:
        return exc.code
    print(f"imported {report.imported} event(s), skipped {report.skipped}")
    for error in report.errors[:20]:
        print(f"  skipped: {error}", file=sys.stderr)
    print_repairs(report.repairs)
    if report.imported:
        try:
            compact_long_history()
        except CliExit as exc:
            return exc.code
    return 0 if report.imported or not report.skipped else 1

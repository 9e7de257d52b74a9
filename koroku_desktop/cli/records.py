"""`koroku history` and `koroku import`: reading and bringing in the record."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from koroku_desktop.app.runtime import import_tutorial
from koroku_desktop.cli.conversation_switch import add_conversation_option
from koroku_desktop.cli.foreign_import_command import import_foreign_export
from koroku_desktop.cli.recall_commands import (
    compact_long_history,
    import_koroku_export,
    print_repairs,
)
from koroku_desktop.cli.session import CliExit, open_runtime
from koroku_desktop.cli.terminal import TerminalApprover, render_entry
from koroku_desktop.domain.events import DamagedEvent, LogEntry, dump_event
from koroku_desktop.maintenance.export_checks import strict_json
from koroku_desktop.maintenance.other_assistants import detect
from koroku_desktop.maintenance.portable import exported_entries, sniff


def register(sub: Any) -> None:
    """Add the record commands."""
    history = sub.add_parser("history", help="show the live context, or the whole log")
    history.add_argument("--all", action="store_true", help="every event ever written")
    form = history.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="a JSON array of events")
    form.add_argument("--jsonl", action="store_true", help="one JSON object per line")
    add_conversation_option(
        history,
        "this conversation (default: the live context of the most recent one; with --all, "
        "every conversation)",
    )
    history.set_defaults(handler=cmd_history)

    imp = sub.add_parser(
        "import",
        help="import a Koroku JSON export, a tutorial SessionManager database, or ChatGPT's "
        "or Claude's data export (conversations.json or the export zip)",
    )
    imp.add_argument("path", type=Path)
    imp.set_defaults(handler=cmd_import)


def entry_json(entry: LogEntry) -> dict[str, Any]:
    """A log entry as a JSON-ready dict (damaged rows marked)."""
    if isinstance(entry, DamagedEvent):
        return {
            "seq": entry.seq,
            "created_at": entry.created_at,
            "kind": entry.kind,
            "damaged": True,
            "error": entry.error,
            "raw": entry.raw,
        }
    return {
        "seq": entry.seq,
        "created_at": entry.created_at,
        "event_id": entry.event_id,
        "turn_id": entry.turn_id,
        **dump_event(entry.event),
    }


def cmd_history(args: argparse.Namespace) -> int:
    """Print the live context (what the model sees) or, with --all, the whole log."""
    try:
        with open_runtime(
            TerminalApprover(), need_key=False, read_only=True, conversation=args.conversation
        ) as runtime:
            damaged = 0
            entries: list[LogEntry]
            if args.all:
                one = runtime.agent.conversation_id if args.conversation else None
                entries = list(exported_entries(runtime.log, one))
            else:
                live = runtime.log.load_live(runtime.agent.conversation_id)
                entries = [*([live.boundary] if live.boundary else []), *live.events]
                damaged = len(live.damaged)
            if args.json:
                print(strict_json([entry_json(e) for e in entries], ensure_ascii=False, indent=1))
                return 0
            for entry in entries:
                if args.jsonl:
                    print(strict_json(entry_json(entry), ensure_ascii=False))
                else:
                    render_entry(entry, sys.stdout)
            if damaged and not args.jsonl:
                print(
                    f"\n({damaged} damaged event(s) skipped; see `koroku history --all`)",
                    file=sys.stderr,
                )
    except CliExit as exc:
        return exc.code
    return 0


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

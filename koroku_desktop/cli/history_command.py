"""`koroku history`: the live context of one conversation, or the whole log.

It only reads, so it opens the log and nothing else of the runtime (no settings, model,
tools or MCP servers): it starts in about half the time `koroku ask` takes.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from koroku_desktop.cli.conversation_switch import add_conversation_option
from koroku_desktop.cli.session import CliExit, open_reading
from koroku_desktop.cli.terminal import render_entry
from koroku_desktop.domain.events import DamagedEvent, LogEntry, dump_event
from koroku_desktop.maintenance.export_checks import strict_json
from koroku_desktop.maintenance.portable import exported_entries


def register(sub: Any) -> None:
    """Add `koroku history`."""
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
        with open_reading(args.conversation) as (log, conversation_id):
            damaged = 0
            entries: list[LogEntry]
            if args.all:
                one = conversation_id if args.conversation else None
                entries = list(exported_entries(log, one))
            else:
                live = log.load_live(conversation_id)
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

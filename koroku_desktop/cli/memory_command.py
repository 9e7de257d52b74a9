"""`koroku memory`: what Koroku knows about you — list, add, edit, forget; on or off.

Every change is a `fact` event in the log (agent/facts.py), so the desktop app and any
`koroku chat` see it with their next request, and it syncs like the rest of the log.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from koroku_desktop.agent.facts import FactBook, Stated, UnknownFact
from koroku_desktop.cli.refusal import refused
from koroku_desktop.cli.session import CliExit, open_runtime
from koroku_desktop.cli.terminal import TerminalApprover
from koroku_desktop.domain.events import FactEvent
from koroku_desktop.domain.facts import CATEGORIES, CATEGORY_WORDS, Fact, FactRefused

OFF_NOTE = (
    "Remembering facts is off: none are sent to the model and no new ones are gathered "
    "(`koroku memory on`, or Settings, turns it back on)."
)


def register(sub: Any) -> None:
    """Add `koroku memory` and its actions."""
    memory = sub.add_parser("memory", help="what Koroku knows about you: list, add, edit, forget")
    actions = memory.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="the facts Koroku knows now (the default)")
    listing.add_argument("--json", action="store_true", help="a JSON array of facts")
    add = actions.add_parser("add", help="tell Koroku a fact about you")
    add.add_argument("text", nargs="+", help="the fact, e.g. I live in Oslo")
    add.add_argument("--subject", default="", help="what it is about (the same replaces)")
    add.add_argument("--category", choices=CATEGORIES, default="about_you")
    edit = actions.add_parser("edit", help="change the text of fact ID")
    edit.add_argument("id", help="the fact's id, as `koroku memory list` shows it")
    edit.add_argument("text", nargs="+")
    forget = actions.add_parser("forget", help="make Koroku forget fact ID (kept in the log)")
    forget.add_argument("id")
    actions.add_parser("on", help="keep facts and send them with every request")
    actions.add_parser("off", help="stop sending and gathering facts (they stay stored)")
    memory.set_defaults(handler=cmd_memory, action=None, json=False)


def fact_json(fact: Fact) -> dict[str, Any]:
    """One fact as `koroku memory list --json` gives it."""
    return {
        "id": fact.seq,
        "event_id": fact.event_id,
        "subject": fact.subject,
        "text": fact.text,
        "category": fact.category,
        "source": fact.source,
        "from_seqs": list(fact.from_seqs),
        "created_at": fact.created_at,
    }


def cmd_memory(args: argparse.Namespace) -> int:
    """Run one `koroku memory` action."""
    action = args.action or "list"
    try:
        with open_runtime(TerminalApprover(), need_key=False, read_only=action == "list") as rt:
            if action in ("on", "off"):
                rt.settings_store.update({"remember_facts": action == "on"})
                print(OFF_NOTE if action == "off" else "Remembering facts is on.")
                return 0
            book = rt.facts
            assert book is not None
            if action == "list":
                return _list(book, args.json, rt.settings.remember_facts)
            return _change(book, rt.agent.conversation_id, action, args)
    except CliExit as exc:
        return exc.code


def _list(book: FactBook, as_json: bool, on: bool) -> int:
    book.refresh()
    facts = book.facts
    if as_json:
        print(json.dumps([fact_json(f) for f in facts], ensure_ascii=False, indent=1))
        return 0
    if not on:
        print(OFF_NOTE, file=sys.stderr)
    if not facts:
        print("Koroku knows no facts about you yet. Tell it: koroku memory add I live in Oslo")
        return 0
    heading = None
    for fact in facts:
        if fact.category != heading:
            heading = fact.category
            print(f"{'' if fact is facts[0] else chr(10)}{CATEGORY_WORDS[heading]}")
        print(f"  #{fact.seq}  {fact.subject}: {' '.join(fact.text.split())}")
    return 0


def _change(book: FactBook, conversation_id: str, action: str, args: argparse.Namespace) -> int:
    try:
        if action == "add":
            text = " ".join(args.text)
            stated = book.remember(conversation_id, args.subject, text, args.category)
        elif action == "edit":
            stated = book.edit(args.id, " ".join(args.text))
        else:
            stated = book.forget(args.id)
    except FactRefused as exc:
        return refused(f"memory {action}", exc)
    except UnknownFact as exc:
        return refused(f"memory {action}", exc, 1)
    print(_said(stated))
    return 0


def _said(stated: Stated) -> str:
    event = stated.stored.event
    assert isinstance(event, FactEvent)
    if event.op == "forget":
        return f"Forgotten: {event.subject} (it stays in the log and in search)."
    line = f"Remembered #{stated.stored.seq} — {event.subject}: {event.text}"
    if stated.replaced is not None:
        line += f"\n(replaces #{stated.replaced.seq}: {stated.replaced.text})"
    return line

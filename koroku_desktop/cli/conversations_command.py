"""`koroku conversations`: list, start, rename, pin, archive, delete and restore conversations.

Every change is one `conversation` event in the log (nothing is updated or removed): a
deleted conversation is hidden from the list (`--all` shows it) and `restore` brings it
back. Pinned ones are listed first, marked ★ (a pin is an event too: it syncs). A
conversation is named by its id, an id prefix (4+ characters) or its exact title;
one that matches none or several is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.app.config import default_paths
from koroku_desktop.app.conversation_wiring import (
    DB_ERRORS,
    DatabaseUnavailable,
    open_conversations,
)
from koroku_desktop.cli.actions import add_ref_actions, json_on_every_action, print_list
from koroku_desktop.cli.db_failure import database_failed
from koroku_desktop.cli.refusal import refused
from koroku_desktop.domain.conversations import Conversation, pinned_first
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.render.text import one_line, when

TITLE_WIDTH = 40
REF_HELP = "an id, an id prefix or the exact title"
REF_ACTIONS = (
    ("pin", "list it first, here, in the app's sidebar and in the tray menu"),
    ("unpin", "take its pin away"),
    ("archive", "keep it listed, but do not open it by default"),
    ("delete", "hide it everywhere (it stays in the log; `restore` brings it back)"),
    ("restore", "bring back a deleted or archived conversation"),
)
"""The actions on one conversation, each with its `--help` line."""


def register(sub: Any) -> None:
    """Add `koroku conversations` and its actions."""
    conv = sub.add_parser(
        "conversations", help="list, start, rename, pin, archive, delete, restore"
    )
    conv.add_argument("--json", action="store_true", help="the list as JSON")
    conv.add_argument("--all", action="store_true", help="show deleted conversations too")
    actions = conv.add_subparsers(dest="action", parser_class=type(conv))
    listing = actions.add_parser("list", help="list them (what `koroku conversations` does)")
    listing.add_argument(
        "--all", action="store_true", default=argparse.SUPPRESS, help="deleted ones too"
    )
    new = actions.add_parser("new", help="start a conversation")
    new.add_argument("title", nargs="*", help="its title (the model names it otherwise)")
    rename = actions.add_parser("rename", help="give a conversation a title")
    rename.add_argument("ref", metavar="ID", help=REF_HELP)
    rename.add_argument("title", nargs="+", help="the new title")
    add_ref_actions(actions, REF_ACTIONS, metavar="ID", ref_help=REF_HELP)
    conv.set_defaults(handler=cmd_conversations)
    json_on_every_action(actions, cmd_conversations)


def conversation_json(c: Conversation) -> dict[str, Any]:
    """One conversation as `--json` gives it."""
    return {
        "id": c.id,
        "title": c.title,
        "created_at": when(c.created_at, "%Y-%m-%dT%H:%M:%S") if c.created_at else None,
        "last_activity": when(c.last_at, "%Y-%m-%dT%H:%M:%S") if c.last_at else None,
        "messages": c.messages,
        "origin": c.origin,
        "read_only": c.read_only,
        "archived": c.archived,
        "deleted": c.deleted,
        "pinned": c.pinned,
    }


PIN_MARK = "★"


def list_line(c: Conversation) -> str:
    """`★ Title   abcd1234  2026-12-03 09:10   12  (archived)` (★: pinned)."""
    flags = " (deleted)" if c.deleted else " (archived)" if c.archived else ""
    if c.origin != "koroku":
        flags += f" (from {c.origin_name}{', read-only' if c.read_only else ''})"
    last = when(c.last_at) if c.last_at else "never"
    title = one_line(c.title, TITLE_WIDTH)
    mark = PIN_MARK if c.pinned else " "
    return f"{mark} {title:<{TITLE_WIDTH}}  {c.short_id:<8}  {last:<16}  {c.messages:>5}{flags}"


def cmd_conversations(args: argparse.Namespace) -> int:
    """List the conversations, or change one (see the module)."""
    action: str | None = getattr(args, "action", None)
    paths = default_paths()
    try:
        with open_conversations(paths, read_only=action in (None, "list")) as book:
            try:
                return _run(book, action, args)
            except DB_ERRORS as exc:
                return database_failed(exc, paths.db)
    except DatabaseUnavailable as exc:
        print(f"koroku: {exc}", file=sys.stderr)
        return 1


def _run(book: ConversationBook, action: str | None, args: argparse.Namespace) -> int:
    if action in (None, "list"):
        shown = pinned_first(book.listed(deleted=getattr(args, "all", False)))
        empty = "No conversations yet (`koroku conversations new` starts one)."
        return print_list(shown, args.json, conversation_json, list_line, empty)
    try:
        if action == "new":
            made = book.create(" ".join(args.title) if args.title else None)
            return _done(args, made, f"started {made.label}")
        found = book.find(args.ref, deleted=action == "restore")
        if action == "rename":
            changed = book.rename(found.id, " ".join(args.title))
            return _done(args, changed, f"renamed {found.short_id}: {changed.title}")
        change: dict[str, tuple[Callable[[str], Conversation], str]] = {
            "pin": (book.pin, "pinned"),
            "unpin": (book.unpin, "unpinned"),
            "archive": (book.archive, "archived"),
            "delete": (book.delete, "deleted"),
            "restore": (book.restore, "restored"),
        }
        act, past = change[action]
        changed = act(found.id)
        return _done(args, changed, f"{past} {changed.label}")
    except RefusedError as exc:  # unknown, ambiguous, an empty title
        return refused("conversations", exc)


def _done(args: argparse.Namespace, conversation: Conversation, line: str) -> int:
    print(json.dumps(conversation_json(conversation), ensure_ascii=False) if args.json else line)
    return 0

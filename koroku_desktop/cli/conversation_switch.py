"""Conversations in the terminal: `-c NAME|ID` on `chat` and `ask`, and the chat's `/new`,
`/switch NAME|ID` and `/conversations`.

Each conversation has its own live context, turn lease and compaction; search, `recall`
and the facts about the user span them all.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

from koroku_desktop.cli.terminal import render_message, render_summary
from koroku_desktop.domain.conversations import Conversation, pinned_first
from koroku_desktop.domain.errors import RefusedError

if TYPE_CHECKING:
    from koroku_desktop.app.runtime import Runtime

TALK_IN = (
    "talk in this conversation (an id prefix or its exact title; default: the most recent one)"
)


def add_conversation_option(parser: Any, help_text: str = TALK_IN) -> None:
    """`-c/--conversation NAME|ID`: `help_text` says what the command does with it (by
    default: talks in it, else in the most recently active conversation)."""
    parser.add_argument("-c", "--conversation", metavar="NAME|ID", help=help_text)


async def replay(runtime: Runtime) -> None:
    """Print the conversation's visible history (its summary, then its messages)."""
    view = await runtime.agent.load()
    if view.summary is not None:
        render_summary(view.summary, sys.stdout)
    for event in view.message_events():
        render_message(event, sys.stdout)


def where_line(runtime: Runtime) -> str:
    """`(in Taxes, 3f2a9c1e; /switch changes it)` when there is more than one conversation
    to be in, else ''."""
    book = runtime.conversations
    if book is None or len(book.listed()) < 2:
        return ""
    agent = runtime.agent
    return f"(in {agent.conversation_title} ({agent.conversation_id[:8]}); /switch changes it)"


async def conversation_command(runtime: Runtime, text: str) -> bool:
    """Run `/new [TITLE]`, `/switch NAME|ID` or `/conversations` if `text` is one (True)."""
    command, _, rest = text.partition(" ")
    if command not in ("/new", "/switch", "/conversations"):
        return False
    book = runtime.conversations
    if book is None:
        print("(conversations cannot be changed here: the log is read-only)", file=sys.stderr)
        return True
    try:
        if command == "/conversations":
            from koroku_desktop.cli.conversations_command import list_line

            for c in pinned_first(await asyncio.to_thread(book.listed)):
                mark = "*" if c.id == runtime.agent.conversation_id else " "
                print(f"{mark} {list_line(c)}")
            return True
        if command == "/new":
            target = await asyncio.to_thread(book.create, rest.strip() or None)
        elif not rest.strip():
            print("(usage: /switch NAME|ID; /conversations lists them)", file=sys.stderr)
            return True
        else:
            target = await asyncio.to_thread(book.find, rest.strip())
            if target.deleted:
                print(f"✗ {target.label} is deleted; restore it first", file=sys.stderr)
                return True
    except RefusedError as exc:
        print(f"✗ {exc}", file=sys.stderr)
        return True
    await switch(runtime, target)
    return True


async def switch(runtime: Runtime, target: Conversation) -> None:
    """Talk in `target` from now on, showing its history."""
    await runtime.switch_to(target)
    print(f"(now in {target.label})")
    await replay(runtime)


async def settle_title(runtime: Runtime) -> None:
    """Let a conversation being named get its title before the process exits."""
    if runtime.titler is not None:
        await runtime.titler.settle()

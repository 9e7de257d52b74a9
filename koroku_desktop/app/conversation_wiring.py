"""Which conversation a front end talks in (switching is in app/agent_pool.py).

The runtime opens the conversation a front end names (`-c`), or the most recently active
one; a log whose conversations are all deleted or archived gets a new one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.app.config import Paths, default_paths
from koroku_desktop.domain.conversations import (
    DEFAULT_CONVERSATION,
    UNTITLED,
    Conversation,
    UnknownConversation,
)
from koroku_desktop.domain.ids import writer_name
from koroku_desktop.store.db_errors import DB_ERRORS as DB_ERRORS
from koroku_desktop.store.db_errors import DatabaseUnavailable as DatabaseUnavailable
from koroku_desktop.store.db_errors import open_event_log
from koroku_desktop.store.log.event_log import SqliteEventLog as SqliteEventLog

log = logging.getLogger(__name__)


class DeletedConversation(UnknownConversation):
    """The conversation named is deleted: restore it before talking in it."""


def choose_conversation(book: ConversationBook, ref: str | None, *, writable: bool) -> Conversation:
    """The conversation `ref` names (id, id prefix or exact title), or the most recently
    active one. Raises `UnknownConversation`, `AmbiguousConversation` or
    `DeletedConversation` for a `ref` that cannot be talked in."""
    if ref is not None:
        found = book.find(ref)
        if found.deleted:
            raise DeletedConversation(
                f"the conversation {found.label} is deleted "
                f"(`koroku conversations restore {found.short_id}` brings it back)"
            )
        return found
    current = book.current()
    if current is not None:
        return current
    if writable:
        return book.create()
    return book.listed(deleted=True)[0]


def opening_conversation(
    book: ConversationBook, ref: str | None, *, writable: bool
) -> Conversation:
    """`choose_conversation`, except that a database too damaged to read the conversations
    from opens the log's first one (each command then meets the damage its own way, with
    one line and the way out) unless `ref` named one."""
    try:
        return choose_conversation(book, ref, writable=writable)
    except DB_ERRORS as exc:
        if ref is not None:
            raise
        log.warning("could not read the conversations (%s); opening the first one", exc)
        return Conversation(DEFAULT_CONVERSATION, UNTITLED, 0.0, 0.0, 0)


@contextmanager
def open_conversations(
    paths: Paths | None = None, *, read_only: bool = False
) -> Iterator[ConversationBook]:
    """The conversations of the data dir's log, without the rest of the runtime (for
    `koroku conversations`). `DatabaseUnavailable` when the log cannot be opened."""
    paths = paths or default_paths()
    with open_event_log(paths.db, read_only=read_only, writer=writer_name("conversations")) as log:
        yield ConversationBook(log)


@contextmanager
def open_reading(
    ref: str | None, paths: Paths | None = None
) -> Iterator[tuple[SqliteEventLog, str]]:
    """The log and the id of the conversation `ref` names (None: the most recently active),
    for a command that only reads them (`koroku history`): none of the rest of the runtime.
    Chosen as the runtime chooses (a log with none gets one, unless it opened read-only);
    raises as `build_runtime` does."""
    paths = paths or default_paths()
    with open_event_log(paths.db, read_only=True, writer=writer_name("terminal")) as log:
        chosen = opening_conversation(ConversationBook(log), ref, writable=not log.read_only)
        yield log, chosen.id

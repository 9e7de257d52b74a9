"""Opening the runtime (or, for a command that only reads, just the log) for a terminal
command, with clear errors instead of tracebacks."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from koroku_desktop.agent.ports import Approver
from koroku_desktop.app.config import NO_KEY_HELP, SettingsError, default_paths
from koroku_desktop.app.conversation_wiring import DB_ERRORS, DatabaseUnavailable
from koroku_desktop.app.conversation_wiring import open_reading as opened_for_reading
from koroku_desktop.cli.db_failure import database_failed
from koroku_desktop.domain.conversations import AmbiguousConversation, UnknownConversation

if TYPE_CHECKING:
    from koroku_desktop.app.conversation_wiring import SqliteEventLog
    from koroku_desktop.app.runtime import Runtime


class CliExit(Exception):
    """Stop the command with this exit code (the message is already printed)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@contextmanager
def open_runtime(
    approver: Approver,
    *,
    need_key: bool,
    read_only: bool = False,
    front_end: str = "terminal",
    conversation: str | None = None,
    one_shot: bool = False,
) -> Iterator[Runtime]:
    """Build the runtime; exit 2 with a clear message on bad settings or a missing key.

    A database that cannot be opened or written (damaged, read-only, locked, disk full),
    now or while the command runs, exits 1 with one line saying so and the way out.
    `read_only` is for commands that only read: they then work on a read-only data dir.
    `front_end` names this process in the turn lease (`waiting for the turn running in ...`).
    `conversation` (`-c`) names the conversation to talk in; one that matches none or
    several, or is deleted, exits 2 with one line. `one_shot`: see `build_runtime`.
    """
    from koroku_desktop.app.runtime import build_runtime  # the whole composition: not for history

    with _exit_on_open_errors():
        runtime = build_runtime(
            approver,
            read_only=read_only,
            front_end=front_end,
            conversation=conversation,
            one_shot=one_shot,
        )
    try:
        if need_key and not runtime.model.has_key:
            print(NO_KEY_HELP, file=sys.stderr)
            raise CliExit(2)
        yield runtime
    except DB_ERRORS as exc:
        raise CliExit(database_failed(exc, runtime.paths.db)) from None
    finally:
        # Already reported: closing a broken database must not add a traceback.
        with contextlib.suppress(*DB_ERRORS):
            runtime.close()


@contextmanager
def open_reading(conversation: str | None) -> Iterator[tuple[SqliteEventLog, str]]:
    """The log and the conversation id for a command that only reads one conversation's
    events (`koroku history`), without building the runtime; exits as `open_runtime` does."""
    with _exit_on_open_errors(), opened_for_reading(conversation) as opened:
        yield opened


@contextmanager
def _exit_on_open_errors() -> Iterator[None]:
    """One line and an exit code for what opening the data dir can raise: a conversation
    named wrong or deleted (2), bad settings (2), a database that cannot be used (1), or
    fails while it is read (`database_failed`)."""
    try:
        yield
    except (UnknownConversation, AmbiguousConversation, SettingsError) as exc:
        print(f"koroku: {exc}", file=sys.stderr)
        raise CliExit(2) from None
    except DatabaseUnavailable as exc:
        print(f"koroku: {exc}", file=sys.stderr)
        raise CliExit(1) from None
    except DB_ERRORS as exc:  # the conversation named could not be read
        raise CliExit(database_failed(exc, default_paths().db)) from None

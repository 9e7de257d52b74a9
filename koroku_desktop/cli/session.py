"""Opening the runtime for a terminal command, with clear errors instead of tracebacks."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from koroku_desktop.agent.ports import Approver
from koroku_desktop.config import NO_KEY_HELP, SettingsError
from koroku_desktop.runtime import Runtime, build_runtime


class CliExit(Exception):
    """Stop the command with this exit code (the message is already printed)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@contextmanager
def open_runtime(
    approver: Approver, *, need_key: bool, front_end: str = "terminal"
) -> Iterator[Runtime]:
    """Build the runtime; exit 2 with a clear message on bad settings or a missing key."""
    try:
        runtime = build_runtime(approver, front_end=front_end)
    except SettingsError as exc:
        print(f"koroku: {exc}", file=sys.stderr)
        raise CliExit(2) from None
    try:
        if need_key and not runtime.model.has_key:
            print(NO_KEY_HELP, file=sys.stderr)
            raise CliExit(2)
        yield runtime
    finally:
        runtime.close()

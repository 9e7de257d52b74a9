"""How a terminal command says it did not do what was asked: `koroku COMMAND: why` on stderr,
and the exit status it ends with (1: it failed or found nothing; 2: the request was refused)."""

from __future__ import annotations

import sys


def refused(command: str, exc: BaseException, status: int = 2) -> int:
    """Say why `koroku {command}` stopped (`exc`'s message) on stderr; return `status`."""
    print(f"koroku {command}: {exc}", file=sys.stderr)
    return status

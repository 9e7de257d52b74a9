"""The root of Koroku's own errors, and the few kinds the front ends turn into messages.

Every error Koroku raises on purpose is a `KorokuError` whose text is fit to show a person
(it says what went wrong and, where there is one, the way out). The front ends catch these
kinds, never a library's types: a terminal command prints the line and exits with the kind's
code, the desktop app shows it in the window. Each concrete error keeps the built-in base it
had (`ValueError`, `LookupError`, ...) beside its kind, so older `except` clauses still hold.
"""

from __future__ import annotations


class KorokuError(Exception):
    """Something Koroku could not do, said for a person (`str(exc)` is the message)."""


class ConfigError(KorokuError):
    """Settings, a hub URL, mcp.json or the keyring cannot be used as they are (exit 2)."""


class StorageError(KorokuError):
    """The database or the blob store cannot be used (exit 1; `koroku doctor` may help)."""


class SyncError(KorokuError):
    """The hub failed, refused this device, or is not the one this data dir synced with."""


class RefusedError(KorokuError):
    """A request refused as things stand (another turn runs, the turn moved on, a file is
    too big): nothing changed, and asking again later may work."""

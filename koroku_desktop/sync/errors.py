"""The hub's errors, Koroku's own types: no caller needs psycopg to handle them."""

from __future__ import annotations

from koroku_desktop.domain.errors import SyncError


class HubError(SyncError):
    """A hub call failed: the hub is unreachable, refused the login, or a statement failed.
    psycopg's error, where there was one, is its `__cause__`."""


class HubNotAnswering(HubError):
    """The hub did not answer in time (or the connection broke while waiting for it).

    A `HubError`, so code that handles an unreachable hub handles this too; `koroku sync`
    tells it apart (exit 75: run it again and it resumes)."""

    def __init__(self, waiting_for: str, what_happened: str) -> None:
        self.waiting_for = waiting_for
        super().__init__(f"the hub {what_happened} while {waiting_for}")

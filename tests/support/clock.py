"""A clock a test sets by hand: the `Callable[[], datetime]` the task book, runner and
scheduler take as their one source of "now"."""

from __future__ import annotations

from datetime import datetime


class Clock:
    """Says `now` until the test moves it."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

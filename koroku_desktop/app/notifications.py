"""The notifier the front ends hand to task runs (`make_notifier`).

This one writes each notification as one line to stderr and to the log: what a headless
`koroku tasks run-due` (the systemd timer's) can do. The desktop replaces the body of
`make_notifier` with its D-Bus adapter, falling back to this one without a session bus.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import TextIO

from koroku_desktop.agent.ports import Notifier

log = logging.getLogger(__name__)


class LogNotifier:
    """Notifications as lines: `title: the body's first line` on `stream` (stderr)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def notify(
        self, title: str, body: str, *, actions: Sequence[tuple[str, str]] = (), tag: str = ""
    ) -> None:
        """Write it; never raises (a closed stream only loses the line)."""
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        line = f"{title}: {first}" if first else title
        log.info("notification%s: %s", f" [{tag}]" if tag else "", line)
        stream = self._stream or sys.stderr
        try:
            stream.write(line + "\n")
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stream
            log.warning("could not show a notification: %s", line)


def make_notifier() -> Notifier:
    """The notifier for this session: stderr and the log."""
    return LogNotifier()

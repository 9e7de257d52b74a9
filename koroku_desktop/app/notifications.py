"""The notifier the front ends hand to task runs (`make_notifier`).

A desktop notification through `org.freedesktop.Notifications` on the session bus
(koroku_desktop/notify), with Open and Snooze on what a task says; where there is no session
bus or no notification service, `LogNotifier` writes each notification as one line to stderr
and to the log: what a headless `koroku tasks run-due` (the systemd timer's) can do.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from koroku_desktop.agent.ports import Notifier
from koroku_desktop.notify.dbus_notifier import NotificationsUnavailable, open_notifier

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


TASK_ACTIONS = (("open", "Open"), ("snooze", "Snooze"))
"""What a task's notification offers: show its conversation, remind again in ten minutes."""


def make_notifier(on_action: Callable[[str, str], None] | None = None) -> Notifier:
    """The notifier for this session: the desktop's notification service, else stderr and
    the log. `on_action(tag, action)` hears Open and Snooze (on the D-Bus thread); a process
    that cannot act on them (the terminal) passes none."""
    try:
        return open_notifier(on_action=on_action, default_actions=TASK_ACTIONS if on_action else ())
    except NotificationsUnavailable as exc:
        log.info("desktop notifications are not available (%s): notifying on stderr", exc)
        return LogNotifier()

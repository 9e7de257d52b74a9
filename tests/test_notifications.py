"""The log notifier: one line a notification, and a closed stream loses only the line."""

from __future__ import annotations

import io

from koroku_desktop.app.notifications import LogNotifier, make_notifier


def test_a_notification_is_its_title_and_first_line() -> None:
    out = io.StringIO()
    LogNotifier(out).notify("Inbox", "\n  Three things are due.\nMore below.", tag="t1")
    LogNotifier(out).notify("Reminder", "", actions=[("open", "Open")])
    assert out.getvalue() == "Inbox: Three things are due.\nReminder\n"


def test_a_closed_stream_does_not_raise() -> None:
    out = io.StringIO()
    out.close()
    LogNotifier(out).notify("Inbox", "text")
    assert callable(make_notifier().notify)

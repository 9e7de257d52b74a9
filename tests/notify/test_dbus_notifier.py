"""The notification adapter against a fake notification service on a private session bus."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from koroku_desktop.app.notifications import LogNotifier, make_notifier
from koroku_desktop.notify.dbus_notifier import (
    DBusNotifier,
    NotificationsUnavailable,
    first_lines,
    open_notifier,
)
from tests.support.dbus import FakeNotifications
from tests.support.waits import wait_until

OPEN_SNOOZE = (("open", "Open"), ("snooze", "Snooze"))


class Actions:
    """What the notifier reported, in order (called on jeepney's receiver thread)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, tag: str, key: str) -> None:
        with self.lock:
            self.seen.append((tag, key))


@pytest.fixture
def actions() -> Actions:
    return Actions()


@pytest.fixture
def notifier(fake_notifications: FakeNotifications, actions: Actions) -> Iterator[DBusNotifier]:
    notifier = open_notifier(on_action=actions)
    yield notifier
    notifier.close()


def test_a_notification_carries_the_app_its_icon_the_first_lines_and_the_actions(
    notifier: DBusNotifier, fake_notifications: FakeNotifications
) -> None:
    body = "\n".join(f"line {n} <b>&" for n in range(1, 9))
    notifier.notify("Garage", body, actions=OPEN_SNOOZE, tag="task-1")
    notifier.flush()
    (call,) = fake_notifications.calls()
    assert call["app_name"] == "Koroku"
    assert call["icon"] == "koroku"
    assert call["summary"] == "Garage"
    # the first four lines, escaped for a server that reads markup
    assert call["body"].splitlines() == [f"line {n} &lt;b&gt;&amp;" for n in range(1, 5)]
    assert call["actions"] == ["default", "Open", "open", "Open", "snooze", "Snooze"]
    assert call["hints"]["desktop-entry"] == "koroku"
    assert call["replaces_id"] == 0


def test_one_tag_replaces_its_notification_and_another_tag_gets_its_own(
    notifier: DBusNotifier, fake_notifications: FakeNotifications
) -> None:
    notifier.notify("Task A", "first", tag="a")
    notifier.notify("Task A", "again", tag="a")
    notifier.notify("Task B", "other", tag="b")
    notifier.notify("No tag", "plain")
    notifier.flush()
    a1, a2, b, plain = fake_notifications.calls()
    assert a2["replaces_id"] == a1["id"] and a2["id"] == a1["id"]
    assert b["replaces_id"] == 0 and b["id"] != a1["id"]
    assert plain["replaces_id"] == 0
    assert notifier.shown("a") == a1["id"] and notifier.shown("b") == b["id"]


def test_actions_and_clicks_reach_the_app_with_the_tag(
    notifier: DBusNotifier, fake_notifications: FakeNotifications, actions: Actions
) -> None:
    notifier.notify("Garage", "call them", actions=OPEN_SNOOZE, tag="task-1")
    notifier.flush()
    (call,) = fake_notifications.calls()
    fake_notifications.act("Invoke", call["id"], "snooze")
    # a click on the notification itself: Open
    fake_notifications.act("Invoke", call["id"], "default")
    wait_until(lambda: len(actions.seen) == 2)
    assert actions.seen == [("task-1", "snooze"), ("task-1", "open")]


def test_a_closed_notification_is_forgotten_and_the_next_one_is_new(
    notifier: DBusNotifier, fake_notifications: FakeNotifications, actions: Actions
) -> None:
    notifier.notify("Garage", "call them", actions=OPEN_SNOOZE, tag="task-1")
    notifier.flush()
    (first,) = fake_notifications.calls()
    fake_notifications.act("Close", first["id"])
    wait_until(lambda: notifier.shown("task-1") is None)
    # gone: a stale click on it (the fake still sends it) does nothing
    fake_notifications.act("Invoke", first["id"], "open")
    notifier.notify("Garage", "again", actions=OPEN_SNOOZE, tag="task-1")
    notifier.flush()
    second = fake_notifications.calls()[1]
    assert second["replaces_id"] == 0 and second["id"] != first["id"]
    # signals from one sender arrive in order: once the click on the new one is handled,
    # the stale one was handled before it
    fake_notifications.act("Invoke", second["id"], "snooze")
    wait_until(lambda: len(actions.seen) > 0)
    assert actions.seen == [("task-1", "snooze")]


def test_without_a_session_bus_the_error_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/nonexistent-koroku-test")
    with pytest.raises(NotificationsUnavailable, match="no D-Bus session bus"):
        open_notifier()


def test_a_bus_without_a_notification_service_is_unavailable(private_bus: str) -> None:
    with pytest.raises(NotificationsUnavailable, match="notification service"):
        open_notifier()


def test_first_lines_keeps_the_first_non_empty_lines_and_shortens() -> None:
    assert first_lines("\n\n a \n\nb\nc\nd\ne") == "a\nb\nc\nd"
    assert first_lines("x" * 500).endswith("…") and len(first_lines("x" * 500)) == 400


def test_a_tagged_notification_without_actions_offers_the_default_ones(
    fake_notifications: FakeNotifications,
) -> None:
    notifier = open_notifier(default_actions=OPEN_SNOOZE)
    try:
        notifier.notify("Task", "done", tag="t")
        notifier.notify("Untagged", "plain")
        notifier.flush()
    finally:
        notifier.close()
    tagged, plain = fake_notifications.calls()
    assert tagged["actions"] == ["default", "Open", "open", "Open", "snooze", "Snooze"]
    assert plain["actions"] == []


def test_the_app_notifier_is_the_desktop_service_when_there_is_one(
    fake_notifications: FakeNotifications, actions: Actions
) -> None:
    notifier = make_notifier(on_action=actions)
    assert isinstance(notifier, DBusNotifier)
    notifier.notify("Inbox", "three things are due", tag="task-9")
    notifier.flush()
    notifier.close()
    (call,) = fake_notifications.calls()
    assert call["actions"] == ["default", "Open", "open", "Open", "snooze", "Snooze"]


def test_without_a_service_the_app_notifier_writes_lines(private_bus: str) -> None:
    assert isinstance(make_notifier(), LogNotifier)

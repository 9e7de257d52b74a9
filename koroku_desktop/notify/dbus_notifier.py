"""Notifications through `org.freedesktop.Notifications` (the Desktop Notifications spec).

`notify` never blocks its caller: the `Notify` call goes to one worker thread (in order; the
worker is joined at interpreter exit, so a short `koroku tasks run-due` still delivers what it
sent). A notification with a tag replaces the one shown before for that tag (`replaces_id`), so
a task shows one notification, not a pile. `ActionInvoked` and `NotificationClosed` arrive on
jeepney's receiver thread; `on_action(tag, action_key)` is called there for a notification
this process showed (the app hands it on to its own loop). Clicking the notification's body is
the spec's `default` action, which is reported as the first action the caller gave.

jeepney (pure Python, already used by the portal code) speaks D-Bus here, so the core and the
terminal front ends notify without Qt.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from queue import Queue
from typing import Any

from jeepney import (
    DBusAddress,
    HeaderFields,
    MatchRule,
    Message,
    MessageType,
    message_bus,
    new_method_call,
)
from jeepney.io.threading import DBusRouter, Proxy, open_dbus_connection

from koroku_desktop.domain.errors import KorokuError

log = logging.getLogger(__name__)

SERVICE = DBusAddress(
    "/org/freedesktop/Notifications",
    bus_name="org.freedesktop.Notifications",
    interface="org.freedesktop.Notifications",
)
CALL_TIMEOUT_S = 5.0
BODY_LINES = 4
BODY_CHARS = 400
ActionHandler = Callable[[str, str], None]


class NotificationsUnavailable(KorokuError):
    """No session bus, or no notification service on it."""


def first_lines(text: str, lines: int = BODY_LINES, chars: int = BODY_CHARS) -> str:
    """The first non-empty lines of a text, each stripped, shortened to `chars` in all."""
    kept = [line.strip() for line in text.splitlines() if line.strip()][:lines]
    out = "\n".join(kept)
    return out if len(out) <= chars else out[: chars - 1].rstrip() + "…"


def escape_markup(text: str) -> str:
    """Body text for a server that reads markup: its three special characters escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Relay(Queue[Message]):
    """A filter queue that hands each matching signal on at once (on the receiver thread)."""

    def __init__(self, deliver: Callable[[Message], None]) -> None:
        super().__init__()
        self._deliver = deliver

    def put_nowait(self, item: Message) -> None:
        self._deliver(item)


class DBusNotifier:
    """The agent's `Notifier` port over the session bus's notification service."""

    def __init__(
        self,
        router: DBusRouter,
        *,
        app_name: str = "Koroku",
        icon: str = "koroku",
        on_action: ActionHandler | None = None,
        capabilities: Sequence[str] = (),
        default_actions: Sequence[tuple[str, str]] = (),
    ) -> None:
        """`default_actions` are offered on a tagged notification that names none (the
        app's Open and Snooze on what a task says)."""
        self._router = router
        self.default_actions = tuple(default_actions)
        self.app_name = app_name
        self.icon = icon
        self.on_action = on_action
        self.capabilities = frozenset(capabilities)
        self._lock = threading.Lock()
        self._ids: dict[str, int] = {}  # tag -> the id of the notification shown for it
        self._tags: dict[int, tuple[str, str]] = {}  # id -> (tag, the key of the default action)
        self._pending: set[Future[None]] = set()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="koroku-notify")
        rule = MatchRule(type="signal", interface=SERVICE.interface, path=SERVICE.object_path)
        Proxy(message_bus, router, timeout=CALL_TIMEOUT_S).AddMatch(rule)
        self._filter: Any = router.filter(rule, queue=_Relay(self._signal))

    def notify(
        self, title: str, body: str, *, actions: Sequence[tuple[str, str]] = (), tag: str = ""
    ) -> None:
        """Show a notification (replacing the one shown for `tag`); returns at once."""
        offered = tuple(actions) or (self.default_actions if tag else ())
        future = self._worker.submit(self._send, title, body, offered, tag)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._done)

    def flush(self, timeout: float = CALL_TIMEOUT_S) -> None:
        """Wait until every notification asked for so far was handed to the service."""
        with self._lock:
            pending = set(self._pending)
        wait(pending, timeout=timeout)

    def shown(self, tag: str) -> int | None:
        """The service's id of the notification last shown for `tag` (None: none open)."""
        with self._lock:
            return self._ids.get(tag)

    def close(self) -> None:
        """Deliver what is queued, stop listening, and leave the bus."""
        self._worker.shutdown(wait=True)
        with contextlib.suppress(Exception):
            self._filter.close()
        with contextlib.suppress(Exception):
            self._router.close()
            self._router.conn.close()

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)
        if (error := future.exception()) is not None:
            log.warning("a desktop notification was not shown: %s", error)

    def _send(self, title: str, body: str, actions: tuple[tuple[str, str], ...], tag: str) -> None:
        text = first_lines(body)
        if "body-markup" in self.capabilities:
            text = escape_markup(text)
        flat: list[str] = []
        if actions and "actions" in self.capabilities:
            flat = ["default", actions[0][1]]
            for key, label in actions:
                flat += [key, label]
        with self._lock:
            replaces = self._ids.get(tag, 0) if tag else 0
        hints = {"desktop-entry": ("s", "koroku"), "category": ("s", "im.received")}
        call = new_method_call(
            SERVICE,
            "Notify",
            "susssasa{sv}i",
            (self.app_name, replaces, self.icon, title, text, flat, hints, -1),
        )
        reply = self._router.send_and_get_reply(call, timeout=CALL_TIMEOUT_S)
        if reply.header.message_type == MessageType.error:
            raise NotificationsUnavailable(f"Notify was refused: {reply.body}")
        (shown,) = reply.body
        if tag:
            with self._lock:
                if replaces and replaces != shown:
                    self._tags.pop(replaces, None)
                self._ids[tag] = shown
                self._tags[shown] = (tag, actions[0][0] if actions else "")

    def _signal(self, message: Message) -> None:
        member = message.header.fields.get(HeaderFields.member)
        if member == "ActionInvoked":
            shown, key = message.body[0], message.body[1]
            with self._lock:
                known = self._tags.get(shown)
            if known is None or self.on_action is None:
                return
            tag, default_key = known
            action = default_key if key == "default" else key
            if action:
                try:
                    self.on_action(tag, action)
                except Exception:
                    log.exception("handling the notification action %r failed", action)
        elif member == "NotificationClosed":
            with self._lock:
                known = self._tags.pop(message.body[0], None)
                if known is not None and self._ids.get(known[0]) == message.body[0]:
                    del self._ids[known[0]]


def open_notifier(
    *,
    app_name: str = "Koroku",
    icon: str = "koroku",
    on_action: ActionHandler | None = None,
    default_actions: Sequence[tuple[str, str]] = (),
) -> DBusNotifier:
    """Connect to the session bus's notification service; `NotificationsUnavailable` says why
    not (no session bus, no service answering `GetCapabilities`)."""
    try:
        router = DBusRouter(open_dbus_connection(bus="SESSION"))
    except Exception as exc:  # noqa: BLE001 — no DBUS_SESSION_BUS_ADDRESS, bus not running
        raise NotificationsUnavailable(f"no D-Bus session bus: {exc}") from None
    try:
        capabilities = _capabilities(router)
        return DBusNotifier(
            router,
            app_name=app_name,
            icon=icon,
            on_action=on_action,
            capabilities=capabilities,
            default_actions=default_actions,
        )
    except Exception as exc:
        with contextlib.suppress(Exception):
            router.close()
            router.conn.close()
        if isinstance(exc, NotificationsUnavailable):
            raise
        raise NotificationsUnavailable(f"the notification service did not answer: {exc}") from None


def _capabilities(router: DBusRouter) -> list[str]:
    """The service's capabilities (`actions`, `body-markup`, ...); raises when none answers."""
    reply = router.send_and_get_reply(
        new_method_call(SERVICE, "GetCapabilities"), timeout=CALL_TIMEOUT_S
    )
    if reply.header.message_type == MessageType.error:
        raise NotificationsUnavailable(f"no notification service: {reply.body[0]}")
    return [str(c) for c in reply.body[0]]

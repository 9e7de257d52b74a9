"""A fake `org.freedesktop.Notifications` service for tests, run as its own process on a
private session bus (the Desktop Notifications spec, as notification daemons implement it).

`GetCapabilities` answers `actions`, `body`, `body-markup`; `Notify` records the call (one JSON
line per call in the file given as argv[1]) and answers the id: `replaces_id` when it names a
notification still open, else a new one. A test drives the person's side through the test-only
interface `org.koroku.FakeNotifications`: `Invoke(id, action_key)` emits `ActionInvoked`,
`Close(id)` emits `NotificationClosed` (reason 2, dismissed). Signals go to the connection that
showed the notification, as GNOME Shell sends them; `Invoke` of a notification already closed
still sends `ActionInvoked` (a late or stale signal), which the client must ignore. argv[2]
`none` runs the bus name without the interface (UnknownMethod), as a bus with something else
owning the name.
"""

from __future__ import annotations

import json
import sys

from jeepney import (
    DBusAddress,
    HeaderFields,
    MessageType,
    new_error,
    new_method_return,
    new_signal,
)
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

PATH = "/org/freedesktop/Notifications"
IFACE = "org.freedesktop.Notifications"
TEST_IFACE = "org.koroku.FakeNotifications"


def main() -> None:
    record = open(sys.argv[1], "a", buffering=1)  # noqa: SIM115 - lives as long as the process
    mode = sys.argv[2] if len(sys.argv) > 2 else "ok"
    conn = open_dbus_connection(bus="SESSION")
    reply = conn.send_and_get_reply(message_bus.RequestName(IFACE, 4))
    assert reply.body[0] == 1, reply.body
    print("ready", flush=True)
    open_ids: dict[int, str] = {}  # id -> the unique name that showed it
    shown_by: dict[int, str] = {}  # the same, closed ones included
    last = 0
    emitter = DBusAddress(PATH, interface=IFACE)
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(HeaderFields.member)
        interface = msg.header.fields.get(HeaderFields.interface)
        sender = str(msg.header.fields.get(HeaderFields.sender))
        if mode == "none" or interface not in (IFACE, TEST_IFACE):
            conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", ("no",)))
            continue
        if member == "GetCapabilities":
            conn.send(new_method_return(msg, "as", (["actions", "body", "body-markup"],)))
        elif member == "GetServerInformation":
            conn.send(new_method_return(msg, "ssss", ("fake", "koroku", "1", "1.2")))
        elif member == "Notify":
            app, replaces, icon, summary, body, actions, hints, timeout = msg.body
            if replaces in open_ids:
                shown = replaces
            else:
                last += 1
                shown = last
            open_ids[shown] = shown_by[shown] = sender
            entry = {
                "id": shown,
                "app_name": app,
                "replaces_id": replaces,
                "icon": icon,
                "summary": summary,
                "body": body,
                "actions": list(actions),
                "hints": {k: v[1] for k, v in hints.items()},
                "timeout": timeout,
            }
            record.write(json.dumps(entry) + "\n")
            conn.send(new_method_return(msg, "u", (shown,)))
        elif member == "CloseNotification":
            (shown,) = msg.body
            conn.send(new_method_return(msg))
            if (owner := open_ids.pop(shown, None)) is not None:
                conn.send(_to(new_signal(emitter, "NotificationClosed", "uu", (shown, 3)), owner))
        elif member == "Invoke":
            shown, key = msg.body
            conn.send(new_method_return(msg))
            if shown in shown_by:
                invoked = new_signal(emitter, "ActionInvoked", "us", (shown, key))
                conn.send(_to(invoked, shown_by[shown]))
        elif member == "Close":
            (shown,) = msg.body
            conn.send(new_method_return(msg))
            if (owner := open_ids.pop(shown, None)) is not None:
                conn.send(_to(new_signal(emitter, "NotificationClosed", "uu", (shown, 2)), owner))
        else:
            conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", (member,)))


def _to(signal, destination: str):  # type: ignore[no-untyped-def]
    """The signal addressed to one connection (a unicast signal)."""
    signal.header.fields[HeaderFields.destination] = destination
    return signal


if __name__ == "__main__":
    main()

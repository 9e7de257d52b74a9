"""A fake xdg-desktop-portal GlobalShortcuts service for tests, run as its own process on a
private session bus: it answers CreateSession and BindShortcuts through Request objects like
the real portal, records what was bound (one JSON line per call in the file given as argv[1]),
and emits Activated for the bound shortcut right after binding it."""

from __future__ import annotations

import json
import sys

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

PATH = "/org/freedesktop/portal/desktop"
IFACE = "org.freedesktop.portal.GlobalShortcuts"


def main() -> None:
    record = open(sys.argv[1], "a", buffering=1)  # noqa: SIM115 - lives as long as the process
    conn = open_dbus_connection(bus="SESSION")
    reply = conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.portal.Desktop", 4))
    assert reply.body[0] == 1, reply.body
    print("ready", flush=True)
    sessions = 0
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(HeaderFields.member)
        sender = str(msg.header.fields.get(HeaderFields.sender)).lstrip(":").replace(".", "_")
        options = msg.body[-1] if msg.body else {}
        token = options.get("handle_token", ("s", "t"))[1]
        request = f"{PATH}/request/{sender}/{token}"
        record.write(json.dumps({"member": member, "body": repr(msg.body)}) + "\n")
        if member == "CreateSession":
            sessions += 1
            session = f"{PATH}/session/{sender}/{options['session_handle_token'][1]}"
            conn.send(new_method_return(msg, "o", (request,)))
            results = {"session_handle": ("o", session)}
            conn.send(
                new_signal(
                    DBusAddress(request, interface="org.freedesktop.portal.Request"),
                    "Response",
                    "ua{sv}",
                    (0, results),
                )
            )
        elif member == "BindShortcuts":
            session, shortcuts = msg.body[0], msg.body[1]
            conn.send(new_method_return(msg, "o", (request,)))
            bound = [
                (sid, {"trigger_description": ("s", "Ctrl+Alt+Space")}) for sid, _ in shortcuts
            ]
            conn.send(
                new_signal(
                    DBusAddress(request, interface="org.freedesktop.portal.Request"),
                    "Response",
                    "ua{sv}",
                    (0, {"shortcuts": ("a(sa{sv})", bound)}),
                )
            )
            for sid, _ in shortcuts:
                conn.send(
                    new_signal(
                        DBusAddress(PATH, interface=IFACE),
                        "Activated",
                        "osta{sv}",
                        (session, sid, 0, {}),
                    )
                )
        else:
            conn.send(new_method_return(msg))


if __name__ == "__main__":
    main()

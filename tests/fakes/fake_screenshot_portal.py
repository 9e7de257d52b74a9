"""A fake xdg-desktop-portal Screenshot service for tests, run as its own process on a private
session bus: `Screenshot(parent_window, options)` answers with the Request object path (built
from the caller's unique name and `handle_token`, as the real portal does), writes a PNG into
the folder given as argv[2], and emits `Response(0, {"uri": file://...})` on that path.

argv: record file (one JSON line per call), output folder, mode: `ok` (take it), `cancel`
(Response code 1, as when the person cancels the dialog), `other` (code 2), `no-screenshot`
(a portal without the interface: UnknownMethod, as xdg-desktop-portal without a backend).
"""

from __future__ import annotations

import json
import struct
import sys
import zlib
from pathlib import Path

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

PATH = "/org/freedesktop/portal/desktop"
IFACE = "org.freedesktop.portal.Screenshot"
WIDTH, HEIGHT = 64, 48


def png(width: int, height: int) -> bytes:
    """A valid RGB PNG of the given size (a colour gradient), written without any library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(
        b"\x00" + b"".join(bytes((x * 4 % 256, y * 5 % 256, 128)) for x in range(width))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    record = open(sys.argv[1], "a", buffering=1)  # noqa: SIM115 - lives as long as the process
    folder = Path(sys.argv[2])
    mode = sys.argv[3]
    conn = open_dbus_connection(bus="SESSION")
    reply = conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.portal.Desktop", 4))
    assert reply.body[0] == 1, reply.body
    print("ready", flush=True)
    shots = 0
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(HeaderFields.member)
        interface = msg.header.fields.get(HeaderFields.interface)
        record.write(json.dumps({"interface": interface, "member": member, "body": repr(msg.body)}))
        record.write("\n")
        if interface != IFACE or member != "Screenshot" or mode == "no-screenshot":
            conn.send(
                new_error(
                    msg,
                    "org.freedesktop.DBus.Error.UnknownMethod",
                    "s",
                    (f"No such interface “{interface}” on object at path {PATH}",),
                )
            )
            continue
        assert msg.header.fields.get(HeaderFields.signature) == "sa{sv}", msg.header.fields
        _parent, options = msg.body
        sender = str(msg.header.fields.get(HeaderFields.sender)).lstrip(":").replace(".", "_")
        request = f"{PATH}/request/{sender}/{options['handle_token'][1]}"
        conn.send(new_method_return(msg, "o", (request,)))
        if mode == "ok":
            shots += 1
            target = folder / f"Screenshot-{shots}.png"
            target.write_bytes(png(WIDTH, HEIGHT))
            code, results = 0, {"uri": ("s", target.as_uri())}
        else:
            code, results = (1 if mode == "cancel" else 2), {}
        conn.send(
            new_signal(
                DBusAddress(request, interface="org.freedesktop.portal.Request"),
                "Response",
                "ua{sv}",
                (code, results),
            )
        )


if __name__ == "__main__":
    main()

"""One xdg-desktop-portal request: a method call whose answer comes later, through the
`Response` signal of a Request object named by a token we choose — how the GlobalShortcuts
session and binding (ui/portal_shortcuts.py) and the Screenshot call (ui/screen_capture.py)
are all asked."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from jeepney import DBusAddress, HeaderFields, MatchRule, Message, message_bus, new_method_call
from jeepney.io.asyncio import DBusRouter, Proxy

from koroku_desktop.domain.errors import KorokuError

CANCELLED = 1
"""A Response's code when the person cancelled the portal's dialog (0 is done, 2 other)."""


class PortalRefused(KorokuError):
    """The portal answered the call itself with a D-Bus error (no such interface or method,
    no portal on the bus)."""

    def __init__(self, method: str, reply: Message) -> None:
        super().__init__(f"the portal refused {method}: {error_text(reply)}")


def error_text(reply: Message) -> str:
    """A D-Bus error reply as `Name: message`."""
    name = reply.header.fields.get(HeaderFields.error_name, "error")
    body = reply.body[0] if reply.body else ""
    return f"{name}: {body}"


async def portal_request(
    router: DBusRouter,
    portal: DBusAddress,
    method: str,
    signature: str,
    body: tuple[Any, ...],
    timeout_s: float,
) -> tuple[int, dict[str, Any]]:
    """Call `method` on `portal` and wait for its Response: its (code, results). `body`'s
    last item is the call's options dict, which gets the request's `handle_token`. Raises
    `PortalRefused` on an error reply, `TimeoutError` when no Response comes in time."""
    token = "koroku" + secrets.token_hex(6)
    sender = (router.unique_name or "").lstrip(":").replace(".", "_")
    path = f"/org/freedesktop/portal/desktop/request/{sender}/{token}"
    rule = MatchRule(
        type="signal", interface="org.freedesktop.portal.Request", member="Response", path=path
    )
    await Proxy(message_bus, router).AddMatch(rule)
    body[-1]["handle_token"] = ("s", token)
    with router.filter(rule) as responses:
        reply = await router.send_and_get_reply(new_method_call(portal, method, signature, body))
        if reply.header.message_type.name == "error":
            raise PortalRefused(method, reply)
        response: Message = await asyncio.wait_for(responses.get(), timeout_s)
    code, results = response.body
    return int(code), dict(results)

"""The quick-ask shortcut as a real global shortcut, through the xdg-desktop-portal
GlobalShortcuts interface on the session bus (KDE Plasma, GNOME 48+, Hyprland): a session is
created, the shortcut bound (the portal shows its own dialog to pick or confirm the keys), and
its `Activated` signal opens the popup. Where no portal offers the interface, `register`
returns None and Koroku keeps telling the user to bind `koroku quick-ask` themselves.

jeepney (pure Python, already pulled in by keyring) speaks D-Bus here: Qt's QtDBus cannot
marshal the `a(sa{sv})` the portal needs from Python without registered C++ types.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import Any

from jeepney import DBusAddress, MatchRule, Message

from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.ui.bus_signals import BusSignals
from koroku_desktop.ui.portal_request import CANCELLED, portal_request

log = logging.getLogger(__name__)

PORTAL = DBusAddress(
    "/org/freedesktop/portal/desktop",
    bus_name="org.freedesktop.portal.Desktop",
    interface="org.freedesktop.portal.GlobalShortcuts",
)
SHORTCUT_ID = "quick-ask"
TIMEOUT_S = 120.0  # the portal's dialog waits for the person


class PortalError(KorokuError):
    """The portal refused or is not there."""


def portal_trigger(sequence: str) -> str:
    """A Qt key sequence (`Ctrl+Alt+Space`) in the portal's trigger syntax (`CTRL+ALT+space`)."""
    parts = [p for p in sequence.split("+") if p]
    mods = {"ctrl": "CTRL", "alt": "ALT", "shift": "SHIFT", "meta": "LOGO", "super": "LOGO"}
    out = [mods.get(p.lower(), p.lower() if len(p) > 1 else p) for p in parts]
    return "+".join(out)


class PortalShortcut:
    """One bound global shortcut; `activated` is called on the event loop when it fires."""

    def __init__(self, activated: Callable[[], None]) -> None:
        self.activated = activated
        self.session: str | None = None
        self.trigger: str = ""
        self._bus = BusSignals()

    async def _request(self, method: str, signature: str, body: tuple[Any, ...]) -> dict[str, Any]:
        """Call a portal method that answers through a Request object's Response signal."""
        assert self._bus.router is not None
        code, results = await portal_request(
            self._bus.router, PORTAL, method, signature, body, TIMEOUT_S
        )
        if code != 0:
            raise PortalError(f"{method} was {'cancelled' if code == CANCELLED else 'refused'}")
        return results

    async def bind(self, description: str, trigger: str) -> bool:
        """Create a session and bind the shortcut; True when the portal accepted it."""
        await self._bus.open("SESSION")
        session_token = "koroku" + secrets.token_hex(6)
        created = await self._request(
            "CreateSession", "a{sv}", ({"session_handle_token": ("s", session_token)},)
        )
        self.session = str(created["session_handle"][1])
        # Listen before binding: a portal may fire at once (the fake one does).
        rule = MatchRule(
            type="signal", interface=PORTAL.interface, member="Activated", path=PORTAL.object_path
        )
        await self._bus.listen(rule, self._signal, bufsize=16)
        shortcuts = [
            (
                SHORTCUT_ID,
                {
                    "description": ("s", description),
                    "preferred_trigger": ("s", portal_trigger(trigger)),
                },
            )
        ]
        bound = await self._request(
            "BindShortcuts", "oa(sa{sv})sa{sv}", (self.session, shortcuts, "", {})
        )
        for shortcut_id, info in bound.get("shortcuts", ("a(sa{sv})", []))[1]:
            if shortcut_id == SHORTCUT_ID:
                self.trigger = str(dict(info).get("trigger_description", ("s", ""))[1])
        return True

    def _signal(self, message: Message) -> None:
        session, shortcut_id = message.body[0], message.body[1]
        if session == self.session and shortcut_id == SHORTCUT_ID:
            self.activated()

    async def close(self) -> None:
        """Stop listening and leave the bus (the portal drops the session with us)."""
        await self._bus.close()


async def register(
    activated: Callable[[], None], trigger: str, description: str = "Open Koroku quick ask"
) -> PortalShortcut | None:
    """Bind the quick-ask shortcut through the portal; None where no portal offers it."""
    shortcut = PortalShortcut(activated)
    try:
        await shortcut.bind(description, trigger)
    except Exception as exc:  # noqa: BLE001 — no bus, no portal, no GlobalShortcuts, refused: say why, go on
        log.info("no global shortcut through the desktop portal: %s", exc)
        await shortcut.close()
        return None
    return shortcut


class GlobalShortcut:
    """The app's quick-ask shortcut: bound through the portal when one offers it (`bound` is
    then the live binding), else nothing, and released on quit."""

    def __init__(self) -> None:
        self.bound: PortalShortcut | None = None

    async def bind(self, activated: Callable[[], None], trigger: str) -> None:
        """Try the portal (its dialog may wait for the person); keep the binding if any."""
        self.bound = await register(activated, trigger)

    async def close(self) -> None:
        """Release the binding."""
        if self.bound is not None:
            await self.bound.close()
            self.bound = None

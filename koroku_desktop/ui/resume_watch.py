"""ResumeWatch: tells the app when the system wakes from a suspend, through logind's
`PrepareForSleep(false)` signal on the system bus (jeepney, as the portal code).

Qt's timers count monotonic time, which stands still while the machine sleeps: a timer armed
for 08:00 before a suspend fires late by the time slept. The task scheduler sets its timer
again when this fires. Where there is no system bus or no logind, `start` returns False and
the scheduler's longest sleep is the only net.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from jeepney import MatchRule, Message, message_bus
from jeepney.io.asyncio import DBusRouter, Proxy, open_dbus_router

log = logging.getLogger(__name__)

LOGIN1 = "org.freedesktop.login1"
MANAGER = "org.freedesktop.login1.Manager"
PATH = "/org/freedesktop/login1"


class ResumeWatch:
    """Calls `resumed` on the loop each time the system comes back from a suspend."""

    def __init__(self, resumed: Callable[[], None], *, bus: str = "SYSTEM") -> None:
        self.resumed = resumed
        self.bus = bus
        self._cm: Any = None
        self._router: DBusRouter | None = None
        self._filter: Any = None
        self._listener: asyncio.Future[None] | None = None

    async def start(self) -> bool:
        """Listen for `PrepareForSleep`; False (logged) where that cannot be done."""
        # The bus matches the sender by its well-known name; jeepney's own filter sees only
        # the unique name, so it matches the rest.
        rule = MatchRule(type="signal", interface=MANAGER, member="PrepareForSleep", path=PATH)
        bus_rule = MatchRule(
            type="signal", sender=LOGIN1, interface=MANAGER, member="PrepareForSleep", path=PATH
        )
        try:
            self._cm = open_dbus_router(bus=self.bus)
            self._router = await self._cm.__aenter__()
            await Proxy(message_bus, self._router).AddMatch(bus_rule)
        except Exception as exc:  # noqa: BLE001 — no system bus (a container, a test)
            log.info("no resume signal from logind: %s", exc)
            await self.close()
            return False
        self._filter = self._router.filter(rule, bufsize=8)
        signals = self._filter.__enter__()
        self._listener = asyncio.ensure_future(self._listen(signals))
        return True

    async def _listen(self, signals: asyncio.Queue[Message]) -> None:
        while True:
            message = await signals.get()
            if message.body and message.body[0] is False:  # False: the system has woken
                self.resumed()

    async def close(self) -> None:
        """Stop listening and leave the bus."""
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        if self._filter is not None:
            self._filter.__exit__(None, None, None)
            self._filter = None
        if self._cm is not None:
            with contextlib.suppress(Exception):
                await self._cm.__aexit__(None, None, None)
            self._cm = self._router = None

"""ResumeWatch: tells the app when the system wakes from a suspend, through logind's
`PrepareForSleep(false)` signal on the system bus (jeepney, as the portal code).

Qt's timers count monotonic time, which stands still while the machine sleeps: a timer armed
for 08:00 before a suspend fires late by the time slept. The task scheduler sets its timer
again when this fires. Where there is no system bus or no logind, `start` returns False and
the scheduler's longest sleep is the only net.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from jeepney import MatchRule, Message

from koroku_desktop.ui.bus_signals import BusSignals

log = logging.getLogger(__name__)

LOGIN1 = "org.freedesktop.login1"
MANAGER = "org.freedesktop.login1.Manager"
PATH = "/org/freedesktop/login1"


class ResumeWatch:
    """Calls `resumed` on the loop each time the system comes back from a suspend."""

    def __init__(self, resumed: Callable[[], None], *, bus: str = "SYSTEM") -> None:
        self.resumed = resumed
        self.bus = bus
        self._signals = BusSignals()

    async def start(self) -> bool:
        """Listen for `PrepareForSleep`; False (logged) where that cannot be done."""
        rule = MatchRule(type="signal", interface=MANAGER, member="PrepareForSleep", path=PATH)
        bus_rule = MatchRule(
            type="signal", sender=LOGIN1, interface=MANAGER, member="PrepareForSleep", path=PATH
        )
        try:
            await self._signals.open(self.bus)
            await self._signals.listen(rule, self._signal, bus_rule=bus_rule)
        except Exception as exc:  # noqa: BLE001 — no system bus (a container, a test)
            log.info("no resume signal from logind: %s", exc)
            await self.close()
            return False
        return True

    def _signal(self, message: Message) -> None:
        if message.body and message.body[0] is False:  # False: the system has woken
            self.resumed()

    async def close(self) -> None:
        """Stop listening and leave the bus."""
        await self._signals.close()

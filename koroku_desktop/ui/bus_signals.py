"""BusSignals: one jeepney connection to a D-Bus bus that hands the signals a rule matches
to a callback on the event loop, until closed — what the portal's global shortcut
(`Activated`) and the resume watch (logind's `PrepareForSleep`) both listen with."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from jeepney import MatchRule, Message, message_bus
from jeepney.io.asyncio import DBusRouter, Proxy, open_dbus_router


class BusSignals:
    """A bus connection (`open`), the signals it listens for (`listen`), and `close`."""

    def __init__(self) -> None:
        self.router: DBusRouter | None = None
        self._cm: Any = None
        self._filter: Any = None
        self._listener: asyncio.Future[None] | None = None

    async def open(self, bus: str) -> DBusRouter:
        """Connect to `bus` ("SESSION", "SYSTEM"); raises where that cannot be done."""
        cm = open_dbus_router(bus=bus)
        self.router = await cm.__aenter__()
        self._cm = cm
        return self.router

    async def listen(
        self,
        rule: MatchRule,
        on_signal: Callable[[Message], None],
        *,
        bus_rule: MatchRule | None = None,
        bufsize: int = 8,
    ) -> None:
        """Ask the bus for what `bus_rule` (else `rule`) matches, then call `on_signal` with
        each message `rule` matches. (The bus can match a sender's well-known name; jeepney's
        own filter sees only the unique name, so `rule` leaves the sender out.)"""
        assert self.router is not None, "open the bus first"
        await Proxy(message_bus, self.router).AddMatch(bus_rule or rule)
        self._filter = self.router.filter(rule, bufsize=bufsize)
        signals = self._filter.__enter__()
        self._listener = asyncio.ensure_future(self._listen(signals, on_signal))

    async def _listen(
        self, signals: asyncio.Queue[Message], on_signal: Callable[[Message], None]
    ) -> None:
        while True:
            on_signal(await signals.get())

    async def close(self) -> None:
        """Stop listening and leave the bus (safe to call at any point, and twice)."""
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
            self._cm = self.router = None

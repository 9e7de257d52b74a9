"""The work the desktop app starts in the background once its window is up: bringing the
memory files up to date with the log, compacting a long history, and warming the Gemini
client up. Each would slow the first paint if done on the start-up path, so `Desktop.start`
runs them as tasks; they only need the runtime."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

from koroku_desktop.app.runtime import Runtime
from koroku_desktop.ui.heap import freeze_startup_heap

log = logging.getLogger(__name__)

MEMORY_SYNC_RETRY_S = 2.0
"""How often the app tries again to bring the memory files up to date while another front
end's turn runs."""


async def sync_memory(runtime: Runtime) -> None:
    """Bring the memory files up to date with the log (files edited while Koroku was
    closed are taken in) in a worker thread, once another front end's turn is over."""
    while not await runtime.sync_memory(wait=False):
        if runtime.log.read_only:
            return
        await asyncio.sleep(MEMORY_SYNC_RETRY_S)


async def compact_long_history(runtime: Runtime) -> None:
    """A long or over-threshold history opened: compact it in the background now.

    Turns go on meanwhile (it holds the turn lease only to append); `quit` cancels it
    with nothing half-written, and the next start begins it again.
    """
    if runtime.model.has_key:
        await runtime.compactor.maybe_compact(runtime.agent)


async def warm_up(runtime: Runtime) -> None:
    """Import the Gemini SDK in a worker thread once the window is up.

    The runtime imports it lazily on the first request; done there, on the event loop,
    the import would freeze the UI for a second or two.
    """
    if runtime.model.has_key:
        try:
            await asyncio.to_thread(runtime.model.prepare)
            runtime.connect_clients()
        except Exception:  # warming up is optional: the first request does it
            log.warning("warming up the Gemini client failed", exc_info=True)
        if runtime.background_embedder is not None:
            runtime.background_embedder.kick()  # backfill what is not embedded yet
        if runtime.search is not None:
            await runtime.search.warm()
    freeze_startup_heap()  # what start-up made stays: full collections skip it


class OnFirstShow(QObject):
    """Runs `action` once, the first time any of `widgets` is shown, then lets them go.

    An app that starts in the tray warms the Gemini SDK up (about 25 MiB and a second of a
    worker thread) when the person first opens a window, not while it sits unused.
    """

    def __init__(self, widgets: Sequence[QWidget], action: Callable[[], object]) -> None:
        super().__init__(widgets[0])
        self._widgets = list(widgets)
        self._action: Callable[[], object] | None = action
        for widget in self._widgets:
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """On the first Show of a watched widget: stop watching and run the action."""
        if event.type() == QEvent.Type.Show and self._action is not None:
            action, self._action = self._action, None
            for widget in self._widgets:
                widget.removeEventFilter(self)
            action()
        return super().eventFilter(watched, event)

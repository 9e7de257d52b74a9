"""SyncFollower: the desktop app's side of syncing with a hub — the state in the status bar,
and the chat shown again when events were placed before ones already shown (a sync pulled
turns the hub placed before this device's unpushed ones, in this process or in another, e.g.
`koroku sync`; see domain/coverage.py), always between turns. The agent rebuilds its live
context itself when it notices (`Agent.catch_up`)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from koroku_desktop.app.runtime import Runtime
from koroku_desktop.ui.bridge import AgentBridge


class SyncFollower:
    """Starts the runtime's sync switch and shows the chat again after a reordering merge."""

    def __init__(
        self,
        runtime: Runtime,
        bridge: AgentBridge,
        reload: Callable[[], Coroutine[Any, Any, None]],
        keep: Callable[[Coroutine[Any, Any, None]], None],
    ) -> None:
        self._runtime, self._bridge = runtime, bridge
        self._reload, self._keep = reload, keep
        self._merged = False

    def start(self) -> None:
        """Rebuild on a reordering (the agent notices it when it catches up with the log,
        whoever merged), and sync continuously with the hub if one is configured, now or
        later in settings, in its own thread; its state goes to the status bar."""
        self._bridge.history_reordered.connect(self.rebuild_after_merge)
        self._bridge.turn_finished.connect(lambda _r: self.rebuild_after_merge(later=True))
        switch = self._runtime.sync_switch
        if switch is not None:
            switch.start(lambda status: self._bridge.sync_status.emit(status.describe()))

    def rebuild_after_merge(self, later: bool = False) -> None:
        """Events were placed before ones already shown: show the chat again from the log,
        now or after the running turn (`later`: a turn just ended, rebuild if a merge came
        meanwhile)."""
        self._merged = self._merged or not later
        if self._merged and not self._runtime.agent.busy:
            self._merged = False
            self._keep(self._reload())

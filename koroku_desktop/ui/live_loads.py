"""LiveLoads: the live contexts read after the start or a switch has shown the page.

Starting (`Desktop.start`) and switching show the page and the title at once and read the
agent's live context (up to `LIVE_TAIL_LIMIT` events parsed and folded, hundreds of ms on a
long history) afterwards, off the loop. Meanwhile the composer stays usable: a message sent,
a regenerate or an edit waits for the same read inside its turn (`Agent.load` is shared),
the message shown as queued (`Lane.book`), and the context meter says "…" until it is known.
A switch to another conversation during the read does not waste it: the agent left behind
keeps the context it read (the pool keeps it among those left idle); only the shown agent's
meter is emitted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from koroku_desktop.agent.loop import Agent
from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.ui.bridge import AgentBridge

log = logging.getLogger(__name__)


class LiveLoads:
    """The agents' live contexts being read, one read per agent (see the module doc)."""

    def __init__(self, bridge: AgentBridge, hint: Callable[[str], None]) -> None:
        self.bridge = bridge
        self._hint = hint
        self._loads: dict[Agent, asyncio.Future[None]] = {}

    def start(self, agent: Agent) -> asyncio.Future[None]:
        """Read `agent`'s live context unless it is (or is being) read; the meter shows it
        when known, "…" until then. The future is done once the agent is ready."""
        running = self._loads.get(agent)
        if running is None:
            running = asyncio.ensure_future(self._load(agent))
            if not running.done():
                self._loads[agent] = running
                running.add_done_callback(lambda _f: self._loads.pop(agent, None))
        self.bridge.emit_meter()
        return running

    async def _load(self, agent: Agent) -> None:
        if agent.loaded:
            return
        try:
            await agent.load()
            # Its size estimate (remembered per live context) is counted off the loop too:
            # thousands of messages without usage figures (an import) take tens of ms.
            await asyncio.to_thread(agent.estimate_context_tokens)
        except Exception as exc:  # a database that cannot be read now: the next turn tries
            if not isinstance(exc, KorokuError):
                log.warning("could not read the conversation's live context", exc_info=True)
            if agent is self.bridge.agent:
                self._hint(f"Could not read the conversation: {exc}")
            return
        if agent is self.bridge.agent:
            self.bridge.emit_meter()

    async def wait(self) -> None:
        """Wait for the reads under way (quit: nothing reads the log after it closes)."""
        if self._loads:
            await asyncio.gather(*self._loads.values(), return_exceptions=True)

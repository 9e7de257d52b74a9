"""The memory files and the log brought together as a front end starts, under the lease.

Memory files changed while Koroku was closed are taken into the log, then every file is
written from the log (agent/memory_events.py), in a worker thread. It holds the
conversation's turn lease meanwhile, and the lease's `MEMORY_KEY` (the files are every
conversation's), so two processes starting together, in one conversation or in two, do not
both record the same outside edit: the second sees the first's edit in the log.
"""

from __future__ import annotations

import logging
from pathlib import Path

from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.memory_events import sync_memory_files_off_loop
from koroku_desktop.agent.turn_gate import TurnBusyError
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.db_errors import DB_ERRORS

log = logging.getLogger(__name__)


async def sync_memory_held(
    agent: Agent, event_log: SqliteEventLog, home: Path, *, wait: bool = True
) -> bool:
    """Sync the memory files under `agent`'s turn lease. False when skipped: another front
    end's turn runs and `wait` is False. A disk problem is only logged. Cancelled, it returns
    once a write under way has ended, or after a few seconds (agent/memory_events.py)."""
    try:
        async with agent.hold_turn(wait=wait):
            # Cancelled (quit), it gives up waiting for another process's sync at once and
            # lets one under way end for a few seconds at most; the next start does the rest.
            await sync_memory_files_off_loop(
                event_log, agent.conversation_id, home, agent.turn_lock
            )
    except TurnBusyError:
        return False
    except DB_ERRORS as exc:
        log.info("could not bring the memory files up to date: %s", exc)
    return True

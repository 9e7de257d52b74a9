"""Lanes: what the bridge keeps per conversation's agent — its queue of messages, its turn
tasks, whether a turn runs, the answer streamed so far, the tool running, the wait and the
last failure — so a conversation left while its turn runs goes on in the background and
shows its state again when the person comes back (see bridge.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.ports import ApprovalDecision, ApprovalRequest
from koroku_desktop.domain.parts import FunctionCallPart


@dataclass(frozen=True)
class QueuedTurn:
    """A message waiting for its turn, known by the id its events will carry."""

    turn_id: str
    text: str


@dataclass(frozen=True)
class LaneState:
    """What a conversation's turn is doing, to show when the conversation is shown again."""

    running: bool
    partial: str
    """The answer streamed so far by the step running (not in the log yet)."""
    tool: FunctionCallPart | None
    """The tool call running now."""


@dataclass(eq=False)
class Lane:
    """One agent's turns as the bridge runs them."""

    agent: Agent
    queued: list[QueuedTurn] = field(default_factory=list)
    head: QueuedTurn | None = None
    """The message whose turn is next (running or waiting for the lease)."""
    active: int = 0
    """Turns booked and not ended (running, waiting, queued)."""
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    turn_tasks: dict[str, asyncio.Task[Any]] = field(default_factory=dict)
    running: bool = False
    partial: list[str] = field(default_factory=list)
    tool: FunctionCallPart | None = None
    waiting_text: str = ""
    last_error: str | None = None

    @property
    def busy(self) -> bool:
        """A turn runs, waits or is queued."""
        return self.active > 0

    @property
    def conversation_id(self) -> str:
        return self.agent.conversation_id

    def state(self) -> LaneState:
        return LaneState(self.running, "".join(self.partial), self.tool)

    def book(self, entry: QueuedTurn | None) -> bool:
        """Count a new turn; its message (if any) is queued behind a running one or next
        (shown as queued while the agent's live context is still read: its turn waits for
        it). True when the queue changed."""
        queued = self.active > 0
        self.active += 1
        if entry is None:
            return False
        if queued:
            self.queued.append(entry)
            return True
        self.head = entry
        if not self.agent.loaded:  # its turn waits for the live context being read
            self.queued.append(entry)
            return True
        return False

    def track(self, turn_id: str, task: asyncio.Task[Any]) -> None:
        self.tasks.append(task)
        task.add_done_callback(self.tasks.remove)
        self.turn_tasks[turn_id] = task
        task.add_done_callback(lambda _t: self.turn_tasks.pop(turn_id, None))

    def dequeue(self, turn_id: str | None) -> bool:
        """Drop `turn_id` from the queue; True when it was there."""
        kept = [q for q in self.queued if q.turn_id != turn_id]
        changed = len(kept) != len(self.queued)
        self.queued = kept
        return changed

    def unqueue(self, turn_id: str) -> str | None:
        """Take a waiting message out before its turn starts (its task is cancelled); its
        text, or None when it is no longer waiting."""
        entry = next((q for q in self.queued if q.turn_id == turn_id), None)
        task = self.turn_tasks.get(turn_id)
        if entry is None or task is None or task.done():
            return None
        self.dequeue(turn_id)
        if self.head is entry:
            self.head = None
        task.cancel()
        return entry.text

    def started(self) -> None:
        """A turn of this lane began."""
        self.dequeue(self.agent.current_turn_id)
        self.head = None
        self.running, self.partial, self.tool, self.last_error = True, [], None, None

    def waiting(self) -> bool:
        """Another front end holds the conversation: the next message shows as queued.
        True when the queue changed."""
        head = self.head
        if head is not None and head not in self.queued:
            self.queued.insert(0, head)
            return True
        return False

    def stop(self) -> list[asyncio.Task[Any]]:
        """Cancel the running turn and the queued ones (quit); the tasks to wait for."""
        tasks = [t for t in self.tasks if not t.done()]
        for task in tasks[1:]:  # the first holds the turn lock; the rest are queued
            task.cancel()
        if tasks and not self.agent.cancel():
            tasks[0].cancel()  # still waiting for the lease (or catching up): just stop
        return tasks


class LaneApprover:
    """The `Approver` of one agent's tool calls: asks through the bridge, naming the agent
    (so an approval of a conversation not shown waits for the person to come back)."""

    def __init__(
        self, ask: Callable[[ApprovalRequest, Agent], Awaitable[ApprovalDecision]], agent: Agent
    ) -> None:
        self._ask, self._agent = ask, agent

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return await self._ask(request, self._agent)

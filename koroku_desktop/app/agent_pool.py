"""AgentPool: one `Agent` per conversation that is shown or still has work under way.

The front end shows one conversation at a time (`current`), but a turn started in another
goes on there after the person moved on: each conversation has its own agent (live context,
turn lease, compaction, queue), so switching never waits for a turn and never rebinds an
agent that is running one. An agent left behind stays in the pool while a turn runs or
waits, or its compaction runs (`in_use` lets a front end keep it for its queued messages),
and then among the last few left idle, its live context ready; then it is released.
Switching back to it shows the same agent, mid-turn if it still runs.

Every agent shares the process's log, model, tools, approval policy, options (settings
apply to all at once), search, facts and titler; what is per conversation is built by
`AgentKit.build`. Quick ask's agent and each task run's are built by the same kit
(`AgentKit.agent`), so every agent is wired alike.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from koroku_desktop.agent.compaction import Compactor
from koroku_desktop.agent.conversations import read_titles
from koroku_desktop.agent.embedding import BackgroundEmbedder
from koroku_desktop.agent.facts import FactBook, tool_writer
from koroku_desktop.agent.hooks import Hook, TurnResult
from koroku_desktop.agent.loop import Agent, AgentOptions
from koroku_desktop.agent.memories import MemorySurfacer
from koroku_desktop.agent.ports import Approver, ChatModel, TurnLock
from koroku_desktop.agent.recall import HybridSearch
from koroku_desktop.agent.titles import Titler
from koroku_desktop.app.config import Settings
from koroku_desktop.app.recall_wiring import recall_search, recall_tool_search
from koroku_desktop.domain.conversations import Conversation
from koroku_desktop.domain.events import CompactionEvent
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.tools.base import ScheduleTask
from koroku_desktop.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

KEEP_IDLE = 4
"""How many conversations left with nothing under way keep their agent (and live context)."""


def follow_settings(options: AgentOptions, settings: Settings) -> None:
    """Take `settings` into the agents' options (shared: every agent sees them next turn);
    `remember_facts` is the runtime's, which also offers or withdraws the tool."""
    options.model = settings.model
    options.max_tool_calls = settings.max_tool_calls
    options.workspace = settings.workspace_path()
    options.compact_at_tokens = settings.compact_at_tokens
    options.thinking_level = settings.thinking_level
    options.quick_thinking_level = settings.quick_ask_thinking_level
    options.surface_memories = settings.surface_memories
    options.web_tools = settings.web_tools()


@dataclass
class AgentKit:
    """What every conversation's agent shares, and how one is built from it."""

    log: SqliteEventLog
    model: ChatModel
    tools: ToolRegistry
    policy: ApprovalPolicy
    approver: Approver
    options: AgentOptions
    turn_lock: TurnLock | None
    clock: Callable[[], datetime] | None = None
    search: HybridSearch | None = None
    embedder: BackgroundEmbedder | None = None
    facts: FactBook | None = None
    titler: Titler | None = None
    schedule: ScheduleTask | None = None
    """The `schedule` tool's writer (set where tasks run: the app's task center)."""
    progress: Hook[[int, int]] = field(default_factory=lambda: Hook("compaction_progress"))
    """Every agent's compaction progress (chunks done, chunks in all)."""

    def build(self, conversation: Conversation) -> tuple[Agent, Compactor]:
        """A fresh agent for `conversation`, with its compactor; its live context is read
        on its first `load()`."""
        agent = self.agent(conversation.id, conversation.title)
        compactor = Compactor()
        compactor.progress = self.progress
        compactor.attach(agent)
        return agent, compactor

    def agent(
        self,
        conversation_id: str,
        title: str = "",
        *,
        approver: Approver | None = None,
        policy: ApprovalPolicy | None = None,
        options: AgentOptions | None = None,
        turn_lock: TurnLock | None = None,
    ) -> Agent:
        """An agent in `conversation_id` on the shared pieces, wired (`equip`), without a
        compactor. Quick ask and task runs hand in their own `approver`, `turn_lock`, and a
        task its `policy` and `options` (its tool budget); None: the kit's."""
        agent = Agent(
            self.log,
            self.model,
            self.tools,
            self.policy if policy is None else policy,
            self.approver if approver is None else approver,
            self.options if options is None else options,
            conversation_id=conversation_id,
            recall=recall_search(self.log),
            turn_lock=self.turn_lock if turn_lock is None else turn_lock,
        )
        agent.conversation_title = title
        if self.clock is not None:
            agent.clock = self.clock
        self.equip(agent)
        return agent

    def equip(self, agent: Agent) -> None:
        """Wire search, surfaced memories, facts, scheduling and titles into `agent`."""
        if self.search is not None:
            agent.recall = recall_tool_search(self.search, agent)
            event_log = self.log
            agent.memories = MemorySurfacer(self.search, titles=lambda: read_titles(event_log))
        embedder = self.embedder
        if embedder is not None:
            agent.hooks.on_turn_finished.append(lambda _result: embedder.kick())
        agent.calls.schedule = self.schedule
        agent.facts = self.facts  # the facts span every conversation
        if self.facts is not None:
            agent.calls.remember = tool_writer(self.facts, agent)
        titler = self.titler
        if titler is not None:

            def name(result: TurnResult) -> None:
                if agent.loaded:
                    titler.after_turn(agent.conversation_id, agent.view, result)

            agent.hooks.on_turn_finished.append(name)


class AgentPool:
    """The shown conversation's agent, those still working in the background, and the last
    few left idle (their live contexts kept: switching back reads nothing again)."""

    def __init__(self, kit: AgentKit, first: Agent, compactor: Compactor) -> None:
        self.kit = kit
        self.current, self.compactor = first, compactor
        self._behind: dict[str, tuple[Agent, Compactor]] = {}
        """The agents not shown, the one left longest ago first."""
        self._watched: weakref.WeakSet[asyncio.Task[CompactionEvent | None]] = weakref.WeakSet()
        self.single = False
        """One agent only (see `show`)."""
        self.keep_idle = KEEP_IDLE
        self.in_use: Callable[[Agent], bool] = lambda _agent: False
        """Whether a front end still has work for an agent (a message queued for it)."""
        self.built: list[Callable[[Agent], None]] = []
        """Told of each agent built after the first (a front end subscribes to its hooks)."""
        self.released: list[Callable[[Agent], None]] = []
        """Told of each agent let go (its conversation is neither shown nor working)."""
        self._follow(first)

    def _follow(self, agent: Agent) -> None:
        agent.hooks.on_turn_finished.append(lambda _result: self.release_idle())

    def agents(self) -> list[Agent]:
        """The shown agent first, then the others kept."""
        return [self.current, *(agent for agent, _c in self._behind.values())]

    def agent_of(self, conversation_id: str) -> Agent | None:
        """The agent talking in `conversation_id` in this process (None: none)."""
        if self.current.conversation_id == conversation_id:
            return self.current
        found = self._behind.get(conversation_id)
        return found[0] if found is not None else None

    def working(self, agent: Agent, compactor: Compactor) -> bool:
        """Whether `agent` has a turn running or waiting, or a compaction, or queued work."""
        return agent.busy or compactor.running or self.in_use(agent)

    async def show(self, conversation: Conversation) -> Agent:
        """Make `conversation`'s agent the shown one: the one kept for it (working there, or
        left idle lately), else a new one (its live context read on `load()`). The one shown
        before stays behind while it works, and among the last `keep_idle` left idle after.

        A `single` pool (a terminal: one conversation, one turn at a time) keeps one agent
        and rebinds it (`Agent.switch_to`): its compaction is stopped first (nothing it did
        is lost) and `RuntimeError` is raised while a turn runs."""
        old, old_compactor = self.current, self.compactor
        if old.conversation_id == conversation.id:
            old.conversation_title = conversation.title
            return old
        if self.single:
            if old.busy:
                raise RuntimeError("a turn is running; switch after it")
            await old_compactor.cancel()
            old.switch_to(conversation.id, conversation.title)
            return old
        found = self._behind.pop(conversation.id, None)
        if found is None:
            found = self.kit.build(conversation)
            self._follow(found[0])
            for subscriber in self.built:
                subscriber(found[0])
        self.current, self.compactor = found
        self.current.conversation_title = conversation.title or self.current.conversation_title
        self._behind[old.conversation_id] = (old, old_compactor)
        self.release_idle()
        return self.current

    def release_idle(self) -> None:
        """Let go of the agents behind with nothing left to do beyond the `keep_idle` left
        last (one compacting is looked at again when its compaction ends)."""
        idle = []
        for conversation_id, (agent, compactor) in self._behind.items():
            task = compactor.task
            if task is not None and not task.done() and task not in self._watched:
                self._watched.add(task)
                task.add_done_callback(lambda _t: self.release_idle())
            if not self.working(agent, compactor):
                idle.append(conversation_id)
        for conversation_id in idle[: max(0, len(idle) - self.keep_idle)]:
            agent, _compactor = self._behind.pop(conversation_id)
            for subscriber in self.released:
                subscriber(agent)

    async def stop_background(self) -> None:
        """Stop every compaction cleanly, and a title being asked for (quit): nothing is
        half-written, and nothing reads the log after it closes."""
        compactors = [self.compactor, *(c for _a, c in self._behind.values())]
        await asyncio.gather(*(c.cancel() for c in compactors))
        naming = self.kit.titler.task if self.kit.titler is not None else None
        if naming is not None and not naming.done():
            naming.cancel()
            await asyncio.wait([naming])

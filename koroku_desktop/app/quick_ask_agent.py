"""Quick ask's own agent: turns in the "Quick asks" conversation beside the window's.

Quick ask asks into a conversation of its own (or the one the chat window shows: then it
uses the runtime's agent). The chat window's agent talks in one conversation at a time and
must not move when a quick ask goes elsewhere, so the desktop gets a second `Agent`, built by
the runtime's `AgentKit` as every conversation's is (same log, model, tools, approval policy,
options, search, facts and titles), in the Quick asks conversation, with its own compaction
and its own turn lease (`quick-ask`): the two agents exclude each other from one
conversation as two processes would. The conversation is found by its purpose
(`ConversationBook.quick_asks`), so a rename keeps it and a delete makes the next quick ask
start a new one.

The lease is this device's (`SqliteTurnLock`): with a sync hub, Quick asks' turns are not
kept apart from another device's turn in the same conversation (each appends its own turn).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from koroku_desktop.agent.compaction import Compactor
from koroku_desktop.agent.loop import Agent
from koroku_desktop.agent.ports import Approver
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.domain.conversations import Conversation
from koroku_desktop.store.local_lease import SqliteTurnLock

FRONT_END = "quick-ask"
"""How quick ask's turns name their writer and their lease (`LockHolder.describe`)."""


@dataclass
class QuickAskAgent:
    """The agent, its compaction and its lease (close it on quit)."""

    agent: Agent
    compactor: Compactor = field(default_factory=Compactor)
    turn_lock: SqliteTurnLock | None = None

    async def retarget(self, conversation: Conversation) -> None:
        """Talk in `conversation` (the Quick asks one may have been deleted and made again;
        its title may have changed). `RuntimeError` while a turn runs."""
        if conversation.id != self.agent.conversation_id:
            if self.compactor.running:
                await self.compactor.cancel()
            self.agent.switch_to(conversation.id, conversation.title)
        self.agent.conversation_title = conversation.title

    async def close(self) -> None:
        """Stop a compaction under way and give the lease back (before the log closes)."""
        await self.compactor.cancel()
        if self.turn_lock is not None:
            self.turn_lock.close()


def quick_ask_agent(
    runtime: Runtime, approver: Approver, conversation: Conversation
) -> QuickAskAgent:
    """A second agent built by `runtime`'s kit, talking in `conversation` (see the module)."""
    lock = None if runtime.turn_lock is None else SqliteTurnLock(runtime.paths.db, FRONT_END)
    agent = runtime.kit.agent(
        conversation.id, conversation.title, approver=approver, turn_lock=lock
    )
    made = QuickAskAgent(agent, turn_lock=lock)
    made.compactor.attach(agent)
    return made

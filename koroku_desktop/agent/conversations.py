"""The conversations: started, named, pinned, archived, deleted and restored by `conversation`
events.

`ConversationBook` reads the registry from the log (domain/conversations.py folds it) and
appends the events that change it. Nothing takes a lease: creating is a new id (two
processes creating at once get two conversations), and a rename, archive or delete is one
event that any later fold sees. A delete while a turn runs in the conversation lets the turn
finish (its events are kept); the conversation stays hidden until restored.
"""

from __future__ import annotations

from koroku_desktop.agent.kind_events import KindFollower, kind_events
from koroku_desktop.agent.ports import ConversationLog, LogReader
from koroku_desktop.domain.conversations import (
    DEFAULT_CONVERSATION,
    NEW_TITLE,
    QUICK_ASKS,
    QUICK_ASKS_TITLE,
    UNTITLED,
    Conversation,
    by_recency,
    clean_title,
    fold_conversations,
    most_recent,
    quick_asks,
    resolve,
)
from koroku_desktop.domain.events import ConversationAction, ConversationEvent, StoredEvent
from koroku_desktop.domain.ids import new_conversation_id


class ConversationBook:
    """The conversations of one log. Blocking (run it off the event loop); thread-safe."""

    def __init__(self, log: ConversationLog) -> None:
        self.log = log
        self._follower = KindFollower(log, "conversation")

    def _read(self) -> list[StoredEvent]:
        return self._follower.read()

    def all(self, *, counts: bool = True) -> dict[str, Conversation]:
        """Every conversation, deleted ones included, by id, as the log stands now
        (`counts=False`: message counts left at 0, a few index lookups a conversation)."""
        return fold_conversations(self._read(), self.log.conversation_activity(counts=counts))

    def listed(self, *, deleted: bool = False) -> list[Conversation]:
        """The conversations, most recently active first (deleted ones only if asked)."""
        return by_recency(c for c in self.all().values() if deleted or not c.deleted)

    def get(self, conversation_id: str) -> Conversation | None:
        """The conversation with this exact id (None: none yet)."""
        return self.all().get(conversation_id)

    def find(self, ref: str, *, deleted: bool = False) -> Conversation:
        """The conversation `ref` names (id, id prefix or exact title; a deleted one's title
        only with `deleted`); raises `UnknownConversation` or `AmbiguousConversation`."""
        return resolve(self.all().values(), ref, deleted=deleted)

    def current(self) -> Conversation | None:
        """The conversation a front end opens by default: the most recently active one
        (neither deleted nor archived); the log's first in an empty log; None when every
        conversation is deleted or archived (then a front end starts a new one)."""
        every = self.all(counts=False)
        if not every:
            return Conversation(DEFAULT_CONVERSATION, UNTITLED, 0.0, 0.0, 0)
        return most_recent(every.values())

    def create(
        self, title: str | None = None, *, origin: str = "koroku", purpose: str | None = None
    ) -> Conversation:
        """Start a conversation (with a title, or `New conversation` until named); `purpose`
        marks one Koroku makes for its own use (domain/conversations.py)."""
        cleaned = clean_title(title) if title is not None else None
        cid = new_conversation_id()
        made = ConversationEvent(action="created", title=cleaned, origin=origin, purpose=purpose)
        self.log.append(cid, [made])
        found = self.get(cid)
        assert found is not None
        return found

    def quick_asks(self) -> Conversation:
        """The conversation quick ask asks into, started (`Quick asks`) on first use. It is
        found by its purpose, so a rename keeps it; deleting it makes the next quick ask
        start a new one."""
        found = quick_asks(self.all(counts=False).values())
        if found is not None:
            return found
        cid = new_conversation_id()
        made = ConversationEvent(action="created", title=QUICK_ASKS_TITLE, purpose=QUICK_ASKS)
        self.log.append(cid, [made])
        first = quick_asks(self.all(counts=False).values())  # another process's, if first
        assert first is not None
        return first

    def rename(self, conversation_id: str, title: str) -> Conversation:
        """The person names it (their title is never replaced by the model's)."""
        return self._change(conversation_id, "renamed", clean_title(title))

    def name(self, conversation_id: str, title: str) -> Conversation:
        """The model's title for it (ignored where the person named it)."""
        return self._change(conversation_id, "titled", clean_title(title))

    def archive(self, conversation_id: str) -> Conversation:
        """Archive it: listed, but not opened by default."""
        return self._change(conversation_id, "archived")

    def delete(self, conversation_id: str) -> Conversation:
        """Hide it everywhere; it stays in the log, search still finds it, `restore` undoes it."""
        return self._change(conversation_id, "deleted")

    def pin(self, conversation_id: str) -> Conversation:
        """Pin it on top of the lists (every device's: it is an event)."""
        return self._change(conversation_id, "pinned")

    def unpin(self, conversation_id: str) -> Conversation:
        """Take its pin away."""
        return self._change(conversation_id, "unpinned")

    def restore(self, conversation_id: str) -> Conversation:
        """Undo a delete or an archive."""
        return self._change(conversation_id, "restored")

    def _change(
        self, conversation_id: str, action: ConversationAction, title: str | None = None
    ) -> Conversation:
        self.log.append(conversation_id, [ConversationEvent(action=action, title=title)])
        changed = self.get(conversation_id)
        assert changed is not None
        return changed

    def titles(self) -> dict[str, str]:
        """Each conversation's title, by id (search hits say where they come from)."""
        return {cid: c.title for cid, c in self.all().items()}


def conversation_events(log: LogReader, after_seq: int = 0) -> list[StoredEvent]:
    """The `conversation` events after `after_seq`, in seq order, page by page. Blocking."""
    return kind_events(log, "conversation", after_seq)


def read_titles(log: LogReader) -> dict[str, str]:
    """The title of every conversation that has `conversation` events (the others are
    `Conversation`); for saying where a search hit comes from. Blocking."""
    return {cid: c.title for cid, c in fold_conversations(conversation_events(log), {}).items()}


def title_of(titles: dict[str, str], conversation_id: str) -> str:
    """A conversation's title from `read_titles` (`Conversation` for the log's first)."""
    return titles.get(conversation_id, UNTITLED)


def needs_title(conversation: Conversation) -> bool:
    """A conversation Koroku started that nobody has named yet (the titler names it)."""
    return conversation.created and not conversation.named and conversation.title == NEW_TITLE

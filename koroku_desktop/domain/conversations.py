"""The conversation registry, folded from the log: ids, titles, times, flags, origin.

A conversation exists once any event names its id. A `conversation` event `created` gives
it its origin and creation time; the log's first conversation ("default", from before
conversations were events) has none and opens as one conversation with everything in it.
Titles come from `titled` (the model) and `renamed` (the person; a rename always wins over
a later model title). `pinned`/`unpinned`: the later one in the log's order wins (a pin made
on another device lands in the synced order like any event). Order is by seq only: "most
recent" is the highest seq of anything but the conversation's own `conversation` events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.events import TITLE_LIMIT, ConversationEvent, StoredEvent

DEFAULT_CONVERSATION = "default"
"""The id of the log's first conversation (and of the one a fresh data dir starts in)."""
NEW_TITLE = "New conversation"
"""What a conversation is called until the model (or the person) names it."""
QUICK_ASKS = "quick-asks"
"""The purpose of the conversation quick ask asks into (found by it, not by its title)."""
QUICK_ASKS_TITLE = "Quick asks"
TASK_RUNS = "task"
"""The purpose of a scheduled task's own conversation (where its runs' turns go)."""
UNTITLED = "Conversation"
"""What a conversation from before titles (the log's first) is called until renamed."""
ID_PREFIX_MIN = 4
"""An id prefix shorter than this never matches (it would match far too much)."""


@dataclass(frozen=True, slots=True)
class Activity:
    """What the log holds of one conversation, besides its `conversation` events."""

    conversation_id: str
    messages: int
    """How many message events it has (user turns, replies, tool responses)."""
    last_seq: int
    """The seq of its newest event other than a `conversation` event (0: none)."""
    last_at: float
    """When that event was written (0.0: none)."""
    first_at: float = 0.0
    """When its first event was written (its creation time for the log's first one)."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation as the registry knows it."""

    id: str
    title: str
    """Its title (`NEW_TITLE` or `UNTITLED` until named)."""
    created_at: float
    last_at: float
    """When it last had activity (its creation time when it has none yet)."""
    last_seq: int
    """The seq its last activity (or its creation) is at: what "most recent" orders by (a
    rename, archive or delete does not count as activity)."""
    messages: int = 0
    origin: str = "koroku"
    archived: bool = False
    deleted: bool = False
    named: bool = False
    """The model or the person gave it a title (the titler leaves it alone then)."""
    renamed: bool = False
    """The person gave it its title (a model's title never replaces it)."""
    created: bool = False
    """It was started by a `created` event (the log's first conversation was not)."""
    imported_seq: int = 0
    """The seq of the last `imported` marker (a chat brought in from another assistant)."""
    pinned: bool = False
    """The person pinned it on top of the lists (the sidebar, the drop-down, the tray)."""
    purpose: str = ""
    """What Koroku made it for (`QUICK_ASKS`: where quick ask asks), from its `created`."""

    @property
    def read_only(self) -> bool:
        """An imported chat nobody has continued yet: nothing but the import came after it.
        It is never opened by default; continuing it (`-c`) makes it a conversation like any."""
        return self.origin != "koroku" and self.imported_seq > self.last_seq

    @property
    def origin_name(self) -> str:
        """Where it comes from, as people say it (`ChatGPT`, `Claude`, `Koroku`)."""
        return origin_name(self.origin)

    @property
    def short_id(self) -> str:
        """The first 8 characters of the id, as lists show it."""
        return self.id[:8]

    @property
    def label(self) -> str:
        """`Title (abcd1234)`: how one line names it."""
        return f"{self.title} ({self.short_id})"


ORIGIN_NAMES = {"koroku": "Koroku", "chatgpt": "ChatGPT", "claude": "Claude"}


def origin_name(origin: str) -> str:
    """An origin as people say it (`chatgpt` -> `ChatGPT`); an unknown one as it is."""
    return ORIGIN_NAMES.get(origin, origin)


class UnknownConversation(RefusedError, LookupError):
    """No conversation has that id, id prefix or title."""


class AmbiguousConversation(RefusedError, LookupError):
    """More than one conversation matches (a short prefix, a shared title)."""


def clean_title(title: str) -> str:
    """A title as recorded: one line, spaces collapsed, at most `TITLE_LIMIT` characters.
    Raises `RefusedError` when nothing is left."""
    text = " ".join(title.split())
    if not text:
        raise RefusedError("a conversation's title cannot be empty")
    return text if len(text) <= TITLE_LIMIT else text[: TITLE_LIMIT - 1].rstrip() + "…"


def fold_conversations(
    events: Iterable[StoredEvent], activity: Mapping[str, Activity]
) -> dict[str, Conversation]:
    """Every conversation, by id: its `conversation` events (in log order) over what the
    log holds of each (`activity`)."""
    found: dict[str, Conversation] = {}
    for stored in sorted(events, key=lambda s: s.order_key):
        event = stored.event
        if not isinstance(event, ConversationEvent):
            continue
        cid = stored.conversation_id
        current = found.get(cid) or Conversation(cid, UNTITLED, stored.created_at, 0.0, 0)
        found[cid] = _apply(current, event, stored)
    for cid, act in activity.items():
        current = found.get(cid) or Conversation(
            cid,
            UNTITLED,
            act.first_at or act.last_at,
            act.last_at,
            act.last_seq,
        )
        if act.last_seq > current.last_seq:
            current = replace(current, last_seq=act.last_seq, last_at=act.last_at)
        if not current.created and act.first_at:  # the log's first: from its first event
            current = replace(current, created_at=min(current.created_at, act.first_at))
        found[cid] = replace(current, messages=act.messages)
    return found


def _apply(current: Conversation, event: ConversationEvent, stored: StoredEvent) -> Conversation:
    match event.action:
        case "created":
            return replace(
                current,
                title=event.title or (current.title if current.named else NEW_TITLE),
                named=current.named or bool(event.title),
                renamed=current.renamed or bool(event.title),
                created_at=stored.created_at,
                last_at=max(current.last_at, stored.created_at),
                last_seq=max(current.last_seq, stored.seq),
                origin=event.origin or "koroku",
                created=True,
                purpose=event.purpose or "",
            )
        case "titled":
            if current.renamed or not event.title:
                return current
            return replace(current, title=event.title, named=True)
        case "renamed":
            if not event.title:
                return current
            return replace(current, title=event.title, named=True, renamed=True)
        case "archived":
            return replace(current, archived=True)
        case "deleted":
            return replace(current, deleted=True)
        case "restored":
            return replace(current, deleted=False, archived=False)
        case "imported":
            return replace(current, imported_seq=stored.seq)
        case "pinned" | "unpinned":
            return replace(current, pinned=event.action == "pinned")


def by_recency(conversations: Iterable[Conversation]) -> list[Conversation]:
    """Most recently active first (by seq; the id breaks ties)."""
    return sorted(conversations, key=lambda c: (c.last_seq, c.id), reverse=True)


def pinned_first(conversations: Iterable[Conversation]) -> list[Conversation]:
    """Pinned ones first, then the rest; each group in the order given (sorted is stable)."""
    return sorted(conversations, key=lambda c: not c.pinned)


def quick_asks(conversations: Iterable[Conversation]) -> Conversation | None:
    """The conversation quick ask asks into: the oldest one made for it that is not deleted
    (two made at once, on two devices, settle on the same one); None: none yet."""
    made = [c for c in conversations if c.purpose == QUICK_ASKS and not c.deleted]
    return min(made, key=lambda c: (c.created_at, c.id)) if made else None


def most_recent(conversations: Iterable[Conversation]) -> Conversation | None:
    """The conversation a front end opens by default: the most recently active one that is
    neither deleted, archived nor an imported chat nobody continued; quick ask's own and
    the scheduled tasks' own only when there is no other (a quick ask or a task's run does
    not move where the chat and the terminal open). None: there is none."""
    shown = [c for c in conversations if not c.deleted and not c.archived and not c.read_only]
    ordered = by_recency(shown)
    ordered.sort(key=lambda c: bool(c.purpose))  # stable: recency within each
    return ordered[0] if ordered else None


def resolve(
    conversations: Iterable[Conversation], ref: str, *, deleted: bool = False
) -> Conversation:
    """The conversation `ref` names: its id, an id prefix (at least `ID_PREFIX_MIN`
    characters) or its exact title (then case-insensitively). A deleted conversation is
    found by title only with `deleted` (a restore). Raises `UnknownConversation` or
    `AmbiguousConversation`."""
    every = list(conversations)
    wanted = ref.strip()
    if not wanted:
        raise UnknownConversation("no conversation named (give an id, an id prefix or a title)")
    exact = [c for c in every if c.id == wanted]
    if exact:
        return exact[0]
    tries = [
        [c for c in every if len(wanted) >= ID_PREFIX_MIN and c.id.startswith(wanted)],
        [c for c in every if (deleted or not c.deleted) and c.title == wanted],
        [
            c
            for c in every
            if (deleted or not c.deleted) and c.title.casefold() == wanted.casefold()
        ],
    ]
    for matches in tries:
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            names = ", ".join(c.label for c in by_recency(matches)[:5])
            raise AmbiguousConversation(
                f"“{_short(wanted)}” matches {len(matches)} conversations ({names}); "
                "give more of the id"
            )
    raise UnknownConversation(
        f"no conversation “{_short(wanted)}” (`koroku conversations` lists them)"
    )


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:59] + "…"

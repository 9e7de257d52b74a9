"""Events of the append-only log, and how old payload shapes are upcast when read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pydantic import ConfigDict, Field, TypeAdapter

from koroku_desktop.domain.frozen import Frozen
from koroku_desktop.domain.grounding import Grounding
from koroku_desktop.domain.log_order import UNSYNCED_BASE as UNSYNCED_BASE
from koroku_desktop.domain.log_order import order_key
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, Part

SCHEMA_VERSION = 1

Role = Literal["user", "model"]


class _EventBase(Frozen):
    """What every event carries: its `kind` (each event narrows it to its own literal, the
    union's discriminator) and the payload's `schema_version`; stored in this order, first."""

    kind: str
    schema_version: int = SCHEMA_VERSION


class Usage(Frozen):
    """What one model response cost and how long it took."""

    prompt_tokens: int | None = None
    output_tokens: int | None = None
    thoughts_tokens: int | None = None
    cached_tokens: int | None = None
    """Prompt tokens served from Gemini's prompt cache (`cachedContentTokenCount`)."""
    model: str | None = None
    latency_ms: float | None = None


class MessageEvent(_EventBase):
    """One content of the conversation: a user turn, a model reply, or tool responses.

    `origin` says who produced it: the person, the model, Koroku's tool runner, or a repair of
    an interrupted call (synthetic error responses).
    """

    kind: Literal["message"] = "message"
    role: Role
    parts: list[Part]
    usage: Usage | None = None
    origin: Literal["person", "model", "tools", "repair", "import"] | None = None
    finish_reason: str | None = None
    """Why the model stopped (`STOP`, `MAX_TOKENS`, `SAFETY`, ...), for model replies."""
    grounding: Grounding | None = None
    """What a model reply was grounded on (Google Search, URL context); shown, not resent."""

    @property
    def function_calls(self) -> list[FunctionCallPart]:
        """The function call parts, in order."""
        return [p for p in self.parts if isinstance(p, FunctionCallPart)]

    @property
    def function_responses(self) -> list[FunctionResponsePart]:
        """The function response parts, in order."""
        return [p for p in self.parts if isinstance(p, FunctionResponsePart)]

    @property
    def is_user_turn(self) -> bool:
        """A real user turn: a user content that answers no function call."""
        return self.role == "user" and not self.function_responses


class CompactionEvent(_EventBase):
    """Older messages folded into an LLM-written summary (see domain/coverage.py).

    `covered_ids` are the event ids of the messages this summary newly folded in, and
    `base_id` the compaction whose summary it extended: the live context is [summary] + every
    message no compaction of its `base_id` chain covers, so turns merged from another device
    stay live. The seqs say the same in this log's numbering, for display; a compaction
    written before ids existed has no `covered_ids` and covers what precedes
    `kept_from_seq` (upcast in `coverage`).
    """

    kind: Literal["compaction"] = "compaction"
    summary: str
    covers_up_to_seq: int
    kept_from_seq: int
    tokens_before: int | None = None
    tokens_after: int | None = None
    covered_ids: list[str] | None = None
    base_id: str | None = None


class ClearedEvent(_EventBase):
    """The user cleared the conversation: the live context restarts empty. Nothing is deleted."""

    kind: Literal["cleared"] = "cleared"


class RejectedEvent(_EventBase):
    """The model refused the message at `rejected_seq` (e.g. too large for its input).

    The message stays in the log but is left out of every later request.
    """

    kind: Literal["rejected"] = "rejected"
    rejected_seq: int
    reason: str
    rejected_id: str | None = None
    """The set-aside message's event id (what other devices match; the seq is this log's)."""


class MemoryEditEvent(_EventBase):
    """A change to the memory file of `day` (`dd-mm-yyyy`): the files are rebuilt from these.

    `append` adds `text` at the end (a compaction's summary): appends made on two devices
    both survive. `replace` sets the whole text (a person's edit); `base_sha` is the SHA-256
    of the text it was edited from, so an edit that did not see an append keeps it (see
    agent/memory_events.py).
    """

    kind: Literal["memory_edit"] = "memory_edit"
    day: str
    op: Literal["append", "replace"]
    text: str
    base_sha: str | None = None
    source: Literal["compaction", "person", "import", "outside"] | None = None
    """Who made it: a compaction, an edit in Koroku, a file found with no events (first
    start), or a file changed outside Koroku while it was closed."""


class SupersededEvent(_EventBase):
    """The turn `superseded_turn_id` was replaced: regenerated, or its message edited and sent
    again. Its events stay in the log (history, search, export) but leave the live context."""

    kind: Literal["superseded"] = "superseded"
    superseded_turn_id: str
    reason: Literal["regenerate", "edit"] = "regenerate"


class RememberedDismissedEvent(_EventBase):
    """The person dismissed a remembered passage as not relevant.

    `passage_seq`/`passage_event_id` name the past event the passage came from;
    `surfaced_seq`/`surfaced_turn_id` the user message it was surfaced with. What was sent is
    unchanged (that message keeps its passages); from now on the passage is not surfaced
    again in this conversation (see `MemorySurfacer`).
    """

    kind: Literal["remembered_dismissed"] = "remembered_dismissed"
    passage_seq: int
    surfaced_seq: int
    passage_event_id: str | None = None
    surfaced_turn_id: str | None = None


FactCategory = Literal["about_you", "preference", "person", "project"]
"""What a fact is about: the user themself, a preference, a person they know, a project."""


class FactEvent(_EventBase):
    """A fact about the user Koroku keeps (domain/facts.py folds them; agent/facts.py
    writes them).

    A newer fact on the same `subject` (compared case- and space-insensitively) supersedes
    the older one, which stays in the log and in search. `op="forget"` takes the subject's
    fact out of what Koroku knows; `replaces_id` names the fact event an edit or a forget
    was made from, so a forget never removes a newer fact it did not see. `from_seqs` and
    `from_ids` name the events the fact came from (seqs are this log's, ids hold across
    devices). `source` says who stated it: the person (Settings, the viewer, `koroku
    memory`), the model's `remember` tool, or a compaction's summariser.
    """

    kind: Literal["fact"] = "fact"
    subject: str
    text: str = ""
    category: FactCategory = "about_you"
    op: Literal["remember", "forget"] = "remember"
    source: Literal["person", "model", "compaction"] = "person"
    from_seqs: list[int] = Field(default_factory=list)
    from_ids: list[str] = Field(default_factory=list)
    replaces_id: str | None = None


ConversationAction = Literal[
    "created",
    "titled",
    "renamed",
    "archived",
    "deleted",
    "restored",
    "imported",
    "pinned",
    "unpinned",
]
"""What a `conversation` event does: start one, name it (the model's title, the person's
rename), archive it, delete it (hidden everywhere, kept in the log), restore it, mark the
end of one import of another assistant's chat into it (written last: see
maintenance/foreign_import.py), or pin/unpin it on top of the lists (the later one wins, in
the log's order, so a pin syncs like any event)."""
TITLE_LIMIT = 200
"""A title is cut to this many characters when it is recorded."""


class ConversationEvent(_EventBase):
    """A change to a conversation itself (domain/conversations.py folds them into the
        registry; agent/conversations.py appends them). Nothing about a conversation is ever
        updated in place: a rename is a newer `renamed`, a delete is `deleted`, a restore undoes
        it. `origin` says where a created conversation comes from (`koroku`, or `chatgpt`/`claude`
    for a chat imported from another assistant's export)."""

    kind: Literal["conversation"] = "conversation"
    action: ConversationAction
    title: str | None = None
    origin: str | None = None
    purpose: str | None = None
    """On `created`: what Koroku made the conversation for, found again by it whatever its
    title becomes (`quick-asks`: the one quick ask asks into; None: the person's own)."""


TaskAction = Literal[
    "created", "changed", "paused", "resumed", "run_started", "run_finished", "removed"
]


class TaskEvent(_EventBase):
    """A change to a scheduled task, or one of its runs, in the task's conversation
    (domain/tasks.py folds them). `created`/`changed` carry what they set (None: unchanged;
    a schedule is the four `schedule_*` fields). A run is `run_started` for one `due` time
    (ISO, UTC; never twice for one time: agent/task_runs.py), then `run_finished` with its
    `outcome`, turn and `detail`; `at` is when (the writer's clock, ISO). Kept as written."""

    kind: Literal["task"] = "task"
    action: TaskAction
    task_id: str
    title: str | None = None
    prompt: str | None = None
    reminder: bool | None = None
    schedule_kind: str | None = None
    schedule_rule: str | None = None
    schedule_tz: str | None = None
    schedule_start: str | None = None
    allowed_tools: list[str] | None = None
    tool_budget: int | None = None
    device: str | None = None
    due: str | None = None
    at: str | None = None
    outcome: str | None = None
    run_turn_id: str | None = None
    late: bool | None = None
    detail: str | None = None


Event = Annotated[
    MessageEvent
    | CompactionEvent
    | ClearedEvent
    | RejectedEvent
    | SupersededEvent
    | RememberedDismissedEvent
    | MemoryEditEvent
    | FactEvent
    | ConversationEvent
    | TaskEvent,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event, config=ConfigDict(defer_build=True))

EVENT_KINDS: tuple[str, ...] = tuple(
    cls.model_fields["kind"].default for cls in get_args(get_args(Event)[0])
)
"""Every kind's stable string, in the union's order (what the viewer lists them in); what
else each kind needs to say of itself is its entry in domain/kinds.py."""
BOUNDARY_KINDS = ("compaction", "cleared")


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as it stands in the log, with its position and identity.

    `seq` is the position in this log (local to one database); `event_id` is the event's
    globally unique id (UUIDv7), the key a multi-device sync merges on. `turn_id` groups the
    events of one turn (the user message, replies, tool responses, a compaction after it).
    `writer` says where it was written: `<front end>@<host>` (e.g. `ask@laptop`). Not to be
    confused with `MessageEvent.origin`, which says who produced a content (person, model...).
    """

    seq: int
    conversation_id: str
    created_at: float
    event: Event
    event_id: str = ""
    turn_id: str = ""
    writer: str = ""
    hub_seq: int | None = None
    """Its place in the sync hub's order (None: not synced, or no hub)."""

    @property
    def order_key(self) -> int:
        """Its place in the one order entries are read in: events synced through a hub in
        the hub's order, then this log's unsynced ones in the order they were written. Every
        device syncing with one hub puts its synced events in the same order, and a turn is
        pushed whole, so turns never interleave. Without a hub it is simply the seq order."""
        return order_key(self.seq, self.hub_seq)


@dataclass(frozen=True, slots=True)
class DamagedEvent:
    """A row that could not be parsed: kept, shown as damaged, never fatal."""

    seq: int
    conversation_id: str
    created_at: float
    kind: str
    raw: str
    error: str


LogEntry = StoredEvent | DamagedEvent


def dump_event(event: Event) -> dict[str, Any]:
    """The JSON-ready payload of an event (what the store writes)."""
    return event.model_dump(mode="json", exclude_none=True)

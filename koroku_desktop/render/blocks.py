"""The neutral blocks every surface formats: what a log entry shows, independent of where.

Blocks are small values, treated as immutable (not `frozen=True`: a frozen dataclass is about
four times slower to build, and opening a 10,000-message conversation builds tens of
thousands). `Block` is their closed union: renderers `match` over it and end with
`assert_never`, so a new block kind is a type error in every renderer until handled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from koroku_desktop.domain.remembered import Remembered

Speaker = Literal["user", "model", "tools", "repair", "marker"]
"""Who an entry is from: the person, the model, Koroku's tool runner, a repair of an
interrupted call, or nobody (a marker: compaction, clear, set-aside message, damaged row)."""


@dataclass(slots=True)
class TextBlock:
    """Visible text of a message (Markdown for the model, plain for the person)."""

    text: str


@dataclass(slots=True)
class ThoughtBlock:
    """The model's visible reasoning summary."""

    text: str


@dataclass(slots=True)
class ToolCallBlock:
    """A tool call the model requested."""

    name: str
    args: dict[str, Any]
    call_id: str | None = None


@dataclass(slots=True)
class ToolResultBlock:
    """A tool's result; `failed` is the one rule every surface shows as ✗."""

    name: str
    response: dict[str, Any]
    failed: bool
    call_id: str | None = None
    call_args: dict[str, Any] | None = None


@dataclass(slots=True)
class CodeBlock:
    """Code the model ran with its code-execution tool (`output=False`) or what it printed."""

    text: str
    output: bool = False
    language: str = ""
    outcome: str | None = None


@dataclass(slots=True)
class AttachmentBlock:
    """A file: one the person attached (`sha256` names Koroku's copy in the blob store, with
    its `name`), inline bytes (`uri` None, `size` in bytes) or a reference to an uploaded file."""

    mime_type: str | None
    uri: str | None = None
    size: int = 0
    name: str = ""
    sha256: str | None = None


@dataclass(slots=True)
class UnknownBlock:
    """A part kind this version does not know (stored and sent back verbatim)."""

    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RememberedBlock:
    """Past passages Koroku surfaced with a user turn (shown as "Remembered" chips)."""

    passages: tuple[Remembered, ...]


@dataclass(slots=True)
class NoticeBlock:
    """A note under a message, e.g. an answer cut off by the output limit or a safety stop."""

    text: str


@dataclass(slots=True)
class CompactionBlock:
    """Marker: earlier messages were folded into `summary`: `covered` more of them (named by
    id, the same on every device), or, for an old compaction, those up to `covers_up_to_seq`
    (a seq of the log it was written in)."""

    summary: str
    covers_up_to_seq: int
    kept_from_seq: int
    tokens_before: int | None = None
    tokens_after: int | None = None
    covered: int | None = None


@dataclass(slots=True)
class ClearedBlock:
    """Marker: the person cleared the conversation (nothing was deleted)."""


@dataclass(slots=True)
class RejectedBlock:
    """Marker: message `rejected_seq` was set aside (too large for the model); kept in the log."""

    rejected_seq: int
    reason: str


@dataclass(slots=True)
class SupersededBlock:
    """Marker: the turn `turn_id` was replaced (regenerated or edited); kept in the log."""

    turn_id: str
    reason: str


@dataclass(slots=True)
class DismissedBlock:
    """Marker: the person dismissed remembered passage `passage_seq` (surfaced with message
    `surfaced_seq`); it is not surfaced again in this conversation."""

    passage_seq: int
    surfaced_seq: int


@dataclass(slots=True)
class MemoryEditBlock:
    """Marker: the memory file of `day` changed (`append`: a summary added; `replace`: the
    whole text set, by a person or found changed outside Koroku)."""

    day: str
    op: str
    text: str
    source: str | None = None


@dataclass(slots=True)
class DamagedBlock:
    """Marker: a row that could not be read; kept, shown, never fatal."""

    kind: str
    error: str
    raw: str


@dataclass(slots=True)
class SourceLink:
    """One source of a grounded reply: its number (as cited in the text), title, link, site."""

    number: int
    title: str
    uri: str
    site: str


@dataclass(slots=True)
class SourcesBlock:
    """The web sources a reply was grounded on (Google Search, URL context), shown under it
    as links; `queries` are the searches Gemini ran, and `suggestions` the Google Search
    suggestions Gemini gave for them (query, link to the results), shown with the answer."""

    sources: tuple[SourceLink, ...]
    queries: tuple[str, ...] = ()
    suggestions: tuple[tuple[str, str], ...] = ()


Block = (
    TextBlock
    | ThoughtBlock
    | ToolCallBlock
    | ToolResultBlock
    | CodeBlock
    | AttachmentBlock
    | UnknownBlock
    | RememberedBlock
    | NoticeBlock
    | CompactionBlock
    | ClearedBlock
    | RejectedBlock
    | DamagedBlock
    | SourcesBlock
    | SupersededBlock
    | DismissedBlock
    | MemoryEditBlock
)
"""Every block kind; renderers match over it exhaustively."""

MarkerBlock = (
    CompactionBlock
    | ClearedBlock
    | RejectedBlock
    | DamagedBlock
    | SupersededBlock
    | DismissedBlock
    | MemoryEditBlock
)
"""The blocks that stand alone as an entry of their own (no speaker)."""


@dataclass(slots=True)
class EntryView:
    """One log entry as blocks, with where it stands and who it is from."""

    seq: int
    created_at: float
    speaker: Speaker
    blocks: tuple[Block, ...]
    marker: MarkerBlock | None = None
    """The marker block when the entry is a marker (then also the only block), else None."""

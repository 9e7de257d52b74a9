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
    server: str | None = None
    """For an MCP resource attached from the composer: the server it was read from."""


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


MarkerStyle = Literal["summary", "record", "divider", "note", "aside"]
"""How a marker stands among entries: a `summary` (its detail leads what follows), a
`record` (a change with its text, read in the log views), a `divider` (a fresh start), a
`note` (one line), or an `aside` (a small remark about an earlier entry)."""


@dataclass(slots=True)
class Reference:
    """An entry a marker points at: a seq of this log (or a turn, by id), and what it is to
    the marker (`covers_up_to`, `kept_from`, `set_aside`, `replaced_turn`, `dismissed`,
    `surfaced_with`...)."""

    role: str
    seq: int | None = None
    turn_id: str = ""


@dataclass(slots=True)
class Marker:
    """Everything that is not a message (a compaction, a clear, a set-aside message, a
    replaced turn, a dismissal, a memory-file change, a damaged row) as one neutral block:
    the fold writes its words once, every surface formats them by `style` alone.

    `kind` is the event kind it comes from (for tests and styling, never switched on).
    `title` is the one sentence every surface shows, `detail` the text that comes with it
    (a summary, a memory file's text), `explanation` what the detail pane says about it,
    `chat` the chat's own line (None: the chat leaves it out), `by` who it is from in the
    viewer's Who column. `search_text` and `embed_text` are what the full-text index and the
    embedder take of it; `fresh_start` says nothing before it is seen any more (a clear).
    """

    kind: str
    title: str
    detail: str = ""
    references: tuple[Reference, ...] = ()
    style: MarkerStyle = "note"
    by: str = ""
    explanation: str = ""
    chat: str | None = None
    search_text: str = ""
    embed_text: str = ""
    fresh_start: bool = False

    def ref(self, role: str) -> Reference | None:
        """The reference playing `role`, if any."""
        return next((r for r in self.references if r.role == role), None)


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

    def search_text(self) -> str:
        """What search takes of them: the searches run, each source's title and site."""
        return " ".join([*self.queries, *(f"{s.title} {s.site}" for s in self.sources)])


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
    | SourcesBlock
    | Marker
)
"""Every block kind; renderers match over it exhaustively. A new event kind adds no block:
it is a `Marker` (render/markers.py)."""


@dataclass(slots=True)
class EntryView:
    """One log entry as blocks, with where it stands and who it is from."""

    seq: int
    created_at: float
    speaker: Speaker
    blocks: tuple[Block, ...]
    marker: Marker | None = None
    """The marker block when the entry is a marker (then also the only block), else None."""

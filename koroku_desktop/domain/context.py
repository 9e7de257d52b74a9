"""ContextView: the projection of the log that the model sees, kept in memory.

Built once from the tail after the latest boundary (compaction or clear) and then updated as
events are appended, so the agent never re-reads history from the database on every step.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from koroku_desktop.domain.coverage import message_key
from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
    SupersededEvent,
)
from koroku_desktop.domain.liveness import Liveness
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, TextPart
from koroku_desktop.domain.projection import Fix, fits_after, project

log = logging.getLogger(__name__)

SUMMARY_PREFIX = "Summary of our conversation so far (older turns were compacted):\n\n"
INTERRUPTED = {"error": "interrupted before the tool returned"}


@dataclass
class ContextView:
    """The live context: an optional summary plus the message events after the boundary.

    `messages` holds the kept message events with their seqs; the list the model is sent is
    kept alongside it, so a step costs the same at 10 kept events as at 5,000.
    """

    summary: CompactionEvent | None = None
    messages: list[StoredEvent] = field(default_factory=list)
    last_seq: int = 0
    boundary_seq: int = 0
    """Seq of the latest compaction or clear folded in (0: none)."""
    unloaded: tuple[int, int] | None = None
    """Live events left in the log when loading (first live seq, first loaded seq)."""
    rejected: set[int] = field(default_factory=set)
    """Seqs of messages the model refused (see `RejectedEvent`): never sent again."""
    rule: Liveness = field(default_factory=Liveness)
    """What superseded and set-aside events say (domain/liveness.py): the one rule for
    which messages leave the context besides the boundaries."""
    replaced_seqs: set[int] = field(default_factory=set)
    """Seqs of the messages replaced turns left out (not surfaced as memories either)."""
    head_id: str = ""
    """Event id of the latest compaction or clear folded in ("": none)."""
    stale: bool = False
    """An event came that cannot be folded in place (merged from elsewhere, or a compaction
    of another summary): build the view again from the log."""
    reordered: bool = False
    """Of those, one placed before events already folded (a sync pulled it, in this process
    or another): whatever shows the conversation in order must be built again too."""
    _last_key: int = field(default=0, repr=False)
    """The highest order key folded (`StoredEvent.order_key`): an event with a higher one
    comes last. Keys only ever go down (a push gives a local event a hub position), so a
    key noted here stays an upper bound."""
    _dropped: list[StoredEvent] = field(default_factory=list, repr=False)
    _events: list[MessageEvent] = field(default_factory=list, repr=False)
    _summary_content: MessageEvent | None = field(default=None, repr=False)
    _suspect: bool = field(default=False, repr=False)
    """Some kept message may break Gemini's rules: build the contents through `project`."""
    _projected: list[MessageEvent] | None = field(default=None, repr=False)
    _reported: set[Fix] = field(default_factory=set, repr=False)

    @classmethod
    def from_tail(
        cls,
        boundary: StoredEvent | None,
        tail: Iterable[StoredEvent],
        unloaded: tuple[int, int] | None = None,
    ) -> ContextView:
        """Build from the store's live load: the head boundary, then the live events in
        entries order with the `rejected` events first (see domain/coverage.py); `unloaded` says
        which live events were left out."""
        view = cls(unloaded=unloaded)
        loaded = list(tail)
        if boundary is not None:
            view._set_head(boundary)
        for stored in loaded:
            if isinstance(stored.event, RejectedEvent | SupersededEvent):
                view._leave_out(stored)
        for stored in loaded:
            out = view.rule.left_out(stored)
            if out is not None and out.kind == "superseded":
                view.replaced_seqs.add(stored.seq)
            elif out is None and isinstance(stored.event, MessageEvent):
                view.messages.append(stored)
            view.last_seq = max(view.last_seq, stored.seq)
        heads = [boundary] if boundary is not None else []
        view._last_key = max((s.order_key for s in [*heads, *loaded]), default=0)
        view._keep(lambda m: True)
        return view

    def _set_head(self, stored: StoredEvent) -> None:
        """Make `stored` (a compaction or clear) the head boundary, messages untouched."""
        self.boundary_seq = stored.seq
        self.head_id = stored.event_id
        self.last_seq = max(self.last_seq, stored.seq)
        if isinstance(stored.event, CompactionEvent):
            self.summary = stored.event
            self._summary_content = MessageEvent(
                role="user", parts=[TextPart(text=SUMMARY_PREFIX + stored.event.summary)]
            )
        else:
            self.summary = None
            self._summary_content = None

    @property
    def superseded(self) -> set[str]:
        """Turn ids replaced by a regenerate or an edit (see `SupersededEvent`): never sent
        again."""
        return set(self.rule.replaced)

    def _leave_out(self, stored: StoredEvent) -> None:
        """Note a `rejected` or `superseded` event in the rule."""
        self.rule.note(stored)
        if isinstance(stored.event, RejectedEvent) and stored.event.rejected_id is None:
            self.rejected.add(stored.event.rejected_seq)

    def apply(self, stored: StoredEvent) -> None:
        """Fold one newly appended (or loaded) event into the projection.

        An event that does not simply come last in entries order (pulled from a sync hub,
        which placed it before events folded here),
        or a compaction that does not extend the current head, marks the view `stale`: the
        caller builds it again from the log (see domain/coverage.py).
        """
        event = stored.event
        self.last_seq = max(self.last_seq, stored.seq)
        self._projected = None
        if isinstance(
            event, MessageEvent | ClearedEvent | CompactionEvent
        ) and not self._comes_last(stored):
            self.stale = self.reordered = True
            return
        if isinstance(event, ClearedEvent):
            self.unloaded = None
            self._set_head(stored)
            self.messages = []
            self._events = []
            self._suspect = False
        elif isinstance(event, CompactionEvent):
            self._compact(stored, event)
        elif isinstance(event, RejectedEvent):
            self._leave_out(stored)
            self._keep(lambda m: self.rule.left_out(m) is None)
            self.rejected.update(m.seq for m in self._dropped)
        elif isinstance(event, SupersededEvent):
            self._leave_out(stored)
            self._keep(lambda m: self.rule.left_out(m) is None)
            self.replaced_seqs.update(m.seq for m in self._dropped)
        elif isinstance(event, MessageEvent) and (out := self.rule.left_out(stored)) is not None:
            if out.kind == "superseded":
                self.replaced_seqs.add(stored.seq)
        elif isinstance(event, MessageEvent):
            previous = self._events[-1] if self._events else self._summary_content
            if not fits_after(previous, event):
                self._suspect = True
            self.messages.append(stored)
            self._events.append(event)

    def _comes_last(self, stored: StoredEvent) -> bool:
        """Whether `stored` comes after everything folded so far in entries order (and notes
        it): then it can be folded in place."""
        key = stored.order_key
        if key < self._last_key:
            return False
        self._last_key = key
        return True

    def _compact(self, stored: StoredEvent, event: CompactionEvent) -> None:
        if event.covered_ids is not None and (event.base_id or "") != self._summary_id():
            self.stale = True  # it extends another summary: the log decides (coverage.py)
            return
        self._set_head(stored)
        if event.covered_ids is not None:
            covered = set(event.covered_ids)
            self._keep(lambda m: message_key(m) not in covered)
            self.unloaded = None  # what was left unloaded was older than the cut: covered
            return
        self._keep(lambda m: m.seq >= event.kept_from_seq)
        if self.unloaded is not None:
            first, loaded = self.unloaded
            first = max(first, event.kept_from_seq)
            self.unloaded = (first, loaded) if first < loaded else None

    def _summary_id(self) -> str:
        return self.head_id if self.summary is not None else ""

    def _keep(self, keep: Callable[[StoredEvent], bool]) -> None:
        """Keep only the messages `keep` accepts, and recheck them against the rules."""
        self._dropped = [m for m in self.messages if not keep(m)]
        self.messages = [m for m in self.messages if keep(m)]
        self._events = [m.event for m in self.messages if isinstance(m.event, MessageEvent)]
        previous = self._summary_content
        self._suspect = False
        for message in self._events:
            if not fits_after(previous, message):
                self._suspect = True
                break
            previous = message

    # -- what the model sees -------------------------------------------------------------

    def contents(self) -> list[MessageEvent]:
        """The contents to send: the summary as a user content, then the kept messages.

        Whatever the log holds, they satisfy Gemini's rules (see `domain/projection.py`): a
        kept message that breaks one is fixed here, with a warning naming its seq.
        """
        if not self._suspect:
            if self._summary_content is None:
                return list(self._events)
            return [self._summary_content, *self._events]
        if self._projected is None:
            numbered = [
                (m.seq, m.event) for m in self.messages if isinstance(m.event, MessageEvent)
            ]
            if self._summary_content is not None:
                numbered.insert(0, (self.boundary_seq, self._summary_content))
            self._projected, fixes = project(numbered, close_trailing=False)
            for fix in fixes:
                if fix not in self._reported:
                    self._reported.add(fix)
                    log.warning("request fixed at seq %d: %s", fix.seq, fix.action)
        return list(self._projected)

    def message_events(self) -> list[MessageEvent]:
        """The kept message events, without the summary."""
        return list(self._events)

    # -- turn structure ------------------------------------------------------------------

    def tool_calls_since_user_turn(self) -> int:
        """How many function calls the model made since the last real user turn."""
        count = 0
        for stored in reversed(self.messages):
            event = stored.event
            if not isinstance(event, MessageEvent):
                continue
            if event.is_user_turn:
                break
            count += len(event.function_calls)
        return count

    def last_user_seq(self) -> int | None:
        """The seq of the last real user turn in the live context (None: there is none)."""
        for stored in reversed(self.messages):
            if isinstance(stored.event, MessageEvent) and stored.event.is_user_turn:
                return stored.seq
        return None

    def pending_calls(self) -> list[FunctionCallPart]:
        """Calls of the last model content that have no responses yet (crash, cancel...)."""
        if not self._events:
            return []
        last = self._events[-1]
        if last.role == "model":
            return last.function_calls
        return []

    def repair(self, reason: dict[str, str] | None = None) -> MessageEvent | None:
        """Synthetic error responses for dangling calls, to append before the next request."""
        pending = self.pending_calls()
        if not pending:
            return None
        return MessageEvent(
            role="user",
            origin="repair",
            parts=[
                FunctionResponsePart(
                    name=call.name,
                    id=call.id,
                    response=dict(reason or INTERRUPTED),
                    call_args=call.args,
                )
                for call in pending
            ],
        )

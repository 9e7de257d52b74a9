"""ContextView: the projection of the log that the model sees, kept in memory.

Built once from the tail after the latest boundary (compaction or clear) and then updated as
events are appended, so the agent never re-reads history from the database on every step.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
    SupersededEvent,
)
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
    superseded: set[str] = field(default_factory=set)
    """Turn ids replaced by a regenerate or an edit (see `SupersededEvent`): never sent again."""
    replaced_seqs: set[int] = field(default_factory=set)
    """Seqs of the messages those turns left out (not surfaced as memories either)."""
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
        """Build from the store's live load: the boundary event and every event after it
        (or only the newest of them: `unloaded` says which live events were left out)."""
        view = cls(unloaded=unloaded)
        if boundary is not None:
            view.apply(boundary)
        for stored in tail:
            view.apply(stored)
        return view

    def apply(self, stored: StoredEvent) -> None:
        """Fold one newly appended (or loaded) event into the projection."""
        event = stored.event
        self.last_seq = max(self.last_seq, stored.seq)
        self._projected = None
        if isinstance(event, ClearedEvent):
            self.unloaded = None
            self.boundary_seq = stored.seq
            self.summary = None
            self._summary_content = None
            self.messages = []
            self._events = []
            self._suspect = False
        elif isinstance(event, CompactionEvent):
            self.boundary_seq = stored.seq
            self.summary = event
            self._summary_content = MessageEvent(
                role="user", parts=[TextPart(text=SUMMARY_PREFIX + event.summary)]
            )
            self._keep(lambda m: m.seq >= event.kept_from_seq)
            if self.unloaded is not None:
                first, loaded = self.unloaded
                first = max(first, event.kept_from_seq)
                self.unloaded = (first, loaded) if first < loaded else None
        elif isinstance(event, RejectedEvent):
            self.rejected.add(event.rejected_seq)
            self._keep(lambda m: m.seq != event.rejected_seq)
        elif isinstance(event, SupersededEvent):
            if event.superseded_turn_id:  # events without a turn id are never left out
                self.superseded.add(event.superseded_turn_id)
                self.replaced_seqs |= {
                    m.seq for m in self.messages if m.turn_id == event.superseded_turn_id
                }
                self._keep(lambda m: m.turn_id != event.superseded_turn_id)
        elif (
            isinstance(event, MessageEvent)
            and (self.summary is None or stored.seq >= self.summary.kept_from_seq)
            and stored.seq not in self.rejected
            and not (stored.turn_id and stored.turn_id in self.superseded)
        ):
            previous = self._events[-1] if self._events else self._summary_content
            if not fits_after(previous, event):
                self._suspect = True
            self.messages.append(stored)
            self._events.append(event)

    def _keep(self, keep: Callable[[StoredEvent], bool]) -> None:
        """Keep only the messages `keep` accepts, and recheck them against the rules."""
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

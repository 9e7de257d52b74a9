"""ContextView: the projection of the log that the model sees, kept in memory.

Built once from the tail after the latest boundary (compaction or clear) and then updated as
events are appended, so the agent never re-reads history from the database on every step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    MessageEvent,
    StoredEvent,
)
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, TextPart

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
    _events: list[MessageEvent] = field(default_factory=list, repr=False)
    _summary_content: MessageEvent | None = field(default=None, repr=False)

    @classmethod
    def from_tail(cls, boundary: StoredEvent | None, tail: Iterable[StoredEvent]) -> ContextView:
        """Build from the store's live load: the boundary event and every event after it."""
        view = cls()
        if boundary is not None:
            view.apply(boundary)
        for stored in tail:
            view.apply(stored)
        return view

    def apply(self, stored: StoredEvent) -> None:
        """Fold one newly appended (or loaded) event into the projection."""
        event = stored.event
        self.last_seq = max(self.last_seq, stored.seq)
        if isinstance(event, ClearedEvent):
            self.boundary_seq = stored.seq
            self.summary = None
            self._summary_content = None
            self.messages = []
            self._events = []
        elif isinstance(event, CompactionEvent):
            self.boundary_seq = stored.seq
            self.summary = event
            self._summary_content = MessageEvent(
                role="user", parts=[TextPart(text=SUMMARY_PREFIX + event.summary)]
            )
            self.messages = [m for m in self.messages if m.seq >= event.kept_from_seq]
            self._events = [m.event for m in self.messages if isinstance(m.event, MessageEvent)]
        elif isinstance(event, MessageEvent) and (
            self.summary is None or stored.seq >= self.summary.kept_from_seq
        ):
            self.messages.append(stored)
            self._events.append(event)

    # -- what the model sees -------------------------------------------------------------

    def contents(self) -> list[MessageEvent]:
        """The contents to send: the summary as a user content, then the kept messages."""
        if self._summary_content is None:
            return list(self._events)
        return [self._summary_content, *self._events]

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

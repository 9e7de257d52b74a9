"""The one liveness rule: where any entry of a conversation stands for the model.

An entry is `live` (the model is sent it), `covered` by a compaction (its summary stands in
for it), `cleared` (a clear came after it), `superseded` (its turn was regenerated or
edited), `set_aside` (the model refused it, see `RejectedEvent`) or `damaged` (unreadable).
The facts come from the log's own events, folded into a `Liveness` in any order; the rule
is in `Liveness.standing`. The context projection (domain/context.py), the live load
(store/log/live_load.py, through `not_set_aside`), the chat's and the viewer's models use it;
which compaction covers a message by id is domain/coverage.py's chain rule (the store keeps
it as an index).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    DamagedEvent,
    LogEntry,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
    SupersededEvent,
)

StandingKind = Literal["live", "covered", "cleared", "superseded", "set_aside", "damaged"]


@dataclass(frozen=True, slots=True)
class Standing:
    """Where one entry stands: `by_seq` names the compaction that covers it or the clear
    after it; `by_turn` the turn that replaced it; `reason` why it was replaced (`edit`,
    `regenerate`) or set aside."""

    kind: StandingKind
    by_seq: int | None = None
    by_turn: str = ""
    reason: str = ""

    @property
    def live(self) -> bool:
        """The model is sent it."""
        return self.kind == "live"

    def label(self) -> str:
        """In a few words, as the viewer's Context column says it."""
        match self.kind:
            case "live":
                return "live"
            case "covered":
                return f"summarised in #{self.by_seq}"
            case "cleared":
                return f"cleared at #{self.by_seq}"
            case "superseded":
                return f"replaced ({'edited' if self.reason == 'edit' else 'regenerated'})"
            case "set_aside":
                return "set aside"
            case "damaged":
                return "skipped (damaged)"


LIVE = Standing("live")


@dataclass(frozen=True, slots=True)
class _Boundary:
    """A compaction or clear, reduced to what the rule needs."""

    key: int
    seq: int
    clear: bool
    kept_from: int | None
    """For an old compaction (no `covered_ids`): it covers every entry below this seq."""


@dataclass
class Liveness:
    """The facts that take entries out of the live context, and the one rule over them.

    `note` folds an event in (a `superseded`, `rejected`, `compaction` or `cleared`; other
    events are ignored), so a reader can feed it every event it has, or only those kinds.
    """

    replaced: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Turn ids a `superseded` event names -> (why: `regenerate`/`edit`, the new turn's id)."""
    set_aside_ids: dict[str, str] = field(default_factory=dict)
    """Event ids of messages set aside -> why."""
    set_aside_seqs: dict[int, str] = field(default_factory=dict)
    """Seqs of messages set aside by an event that names no id (an old one) -> why."""
    _boundaries: list[_Boundary] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, entries: Iterable[LogEntry]) -> Liveness:
        """The facts among `entries`."""
        rule = cls()
        for entry in entries:
            if isinstance(entry, StoredEvent):
                rule.note(entry)
        return rule

    def note(self, stored: StoredEvent) -> bool:
        """Fold one event in; whether it was one of the kinds the rule reads."""
        event = stored.event
        if isinstance(event, SupersededEvent):
            if event.superseded_turn_id:  # events without a turn id are never left out
                self.replaced[event.superseded_turn_id] = (event.reason, stored.turn_id)
        elif isinstance(event, RejectedEvent):
            if event.rejected_id is not None:
                self.set_aside_ids[event.rejected_id] = event.reason
            else:
                self.set_aside_seqs[event.rejected_seq] = event.reason
        elif isinstance(event, CompactionEvent | ClearedEvent):
            old = isinstance(event, CompactionEvent) and event.covered_ids is None
            kept = event.kept_from_seq if isinstance(event, CompactionEvent) and old else None
            bisect.insort(
                self._boundaries,
                _Boundary(stored.order_key, stored.seq, isinstance(event, ClearedEvent), kept),
                key=lambda b: b.key,
            )
        else:
            return False
        return True

    def in_replaced_turn(self, entry: LogEntry) -> bool:
        """Whether `entry` belongs to a turn a regenerate or an edit replaced."""
        return (
            isinstance(entry, StoredEvent)
            and bool(entry.turn_id)
            and (entry.turn_id in self.replaced)
        )

    def left_out(self, stored: StoredEvent) -> Standing | None:
        """Superseded or set aside (in that order), whatever the boundaries say; None when
        neither. Only messages are ever left out."""
        if not isinstance(stored.event, MessageEvent):
            return None
        if self.in_replaced_turn(stored):
            reason, by_turn = self.replaced[stored.turn_id]
            return Standing("superseded", by_turn=by_turn, reason=reason)
        if stored.event_id and stored.event_id in self.set_aside_ids:
            return Standing("set_aside", reason=self.set_aside_ids[stored.event_id])
        if stored.seq in self.set_aside_seqs:
            return Standing("set_aside", reason=self.set_aside_seqs[stored.seq])
        return None

    def standing(self, entry: LogEntry, covered_by: int | None = None) -> Standing:
        """The rule: damaged, else superseded, else set aside, else the first boundary after
        it in entries order that takes it out (a clear, or an old compaction below whose
        `kept_from_seq` it is, or the compaction `covered_by` names: the one whose chain
        covers it by id), else covered by `covered_by`, else live."""
        if isinstance(entry, DamagedEvent):
            return Standing("damaged")
        out = self.left_out(entry)
        if out is not None:
            return out
        start = bisect.bisect_right(self._boundaries, entry.order_key, key=lambda b: b.key)
        for b in self._boundaries[start:]:
            if b.clear:
                return Standing("cleared", by_seq=b.seq)
            if (b.kept_from is not None and entry.seq < b.kept_from) or covered_by == b.seq:
                return Standing("covered", by_seq=b.seq)
        return LIVE if covered_by is None else Standing("covered", by_seq=covered_by)

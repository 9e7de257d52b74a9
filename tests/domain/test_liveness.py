"""The one liveness rule: where each entry stands, whatever order its facts came in."""

from __future__ import annotations

from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    DamagedEvent,
    Event,
    MessageEvent,
    RejectedEvent,
    StoredEvent,
    SupersededEvent,
)
from koroku_desktop.domain.liveness import Liveness, Standing
from koroku_desktop.domain.parts import TextPart


def at(seq: int, event: Event, turn: str = "", event_id: str = "") -> StoredEvent:
    return StoredEvent(seq, "c", float(seq), event, event_id=event_id or f"e{seq}", turn_id=turn)


def message(seq: int, turn: str = "") -> StoredEvent:
    return at(seq, MessageEvent(role="user", parts=[TextPart(text=f"m{seq}")]), turn)


def test_each_standing_with_what_took_it_out() -> None:
    log = [
        message(1),
        message(2),
        at(3, CompactionEvent(summary="s", covers_up_to_seq=2, kept_from_seq=4)),
        message(4, "t1"),
        message(5),
        at(6, RejectedEvent(rejected_seq=5, reason="too large", rejected_id="e5")),
        at(7, SupersededEvent(superseded_turn_id="t1", reason="edit"), "t2"),
        message(8, "t2"),
        at(9, ClearedEvent()),
        message(10),
        message(11),
    ]
    rule = Liveness.of(reversed(log))  # the facts may come in any order
    standing = {s.seq: rule.standing(s) for s in log}
    assert standing[1] == standing[2] == Standing("covered", by_seq=3)
    assert standing[4] == Standing("superseded", by_turn="t2", reason="edit")
    assert standing[5] == Standing("set_aside", reason="too large")
    assert standing[8] == Standing("cleared", by_seq=9)
    assert standing[10].live and standing[10].label() == "live"
    assert rule.standing(message(11), covered_by=12).label() == "summarised in #12"
    assert [standing[n].label() for n in (1, 4, 5, 8)] == [
        "summarised in #3",
        "replaced (edited)",
        "set aside",
        "cleared at #9",
    ]
    damaged = DamagedEvent(12, "c", 0.0, "message", "{", "bad json")
    assert rule.standing(damaged).label() == "skipped (damaged)"


def test_only_messages_are_left_out_and_an_old_rejection_names_a_seq() -> None:
    rule = Liveness.of([at(3, RejectedEvent(rejected_seq=2, reason="r")), at(4, ClearedEvent())])
    assert rule.left_out(message(2)) == Standing("set_aside", reason="r")
    assert rule.left_out(at(2, ClearedEvent())) is None
    supersede = at(5, SupersededEvent(superseded_turn_id=""))
    assert rule.note(supersede) and not rule.replaced  # no turn id: nothing is replaced
    assert not rule.note(message(6))

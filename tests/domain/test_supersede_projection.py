"""A `superseded` event leaves the replaced turn out of the live context, nothing else."""

from __future__ import annotations

from pathlib import Path

from koroku_desktop.agent.supersede import last_turn
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import (
    CompactionEvent,
    MessageEvent,
    StoredEvent,
    SupersededEvent,
)
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.render.fold import entry_view
from koroku_desktop.store import SqliteEventLog


def msg(role: str, text: str) -> MessageEvent:
    origin = "person" if role == "user" else "model"
    return MessageEvent(role=role, origin=origin, parts=[TextPart(text=text)])  # type: ignore[arg-type]


def texts(view: ContextView) -> list[str]:
    return [c.parts[0].text for c in view.contents()]  # type: ignore[union-attr]


def stored(seq: int, event: object, turn: str) -> StoredEvent:
    return StoredEvent(seq, "default", 0.0, event, turn_id=turn)  # type: ignore[arg-type]


def test_the_superseded_turn_leaves_the_live_context() -> None:
    view = ContextView()
    for s in [
        stored(1, msg("user", "q1"), "t1"),
        stored(2, msg("model", "a1"), "t1"),
        stored(3, msg("user", "q2"), "t2"),
        stored(4, msg("model", "a2"), "t2"),
    ]:
        view.apply(s)
    view.apply(stored(5, SupersededEvent(superseded_turn_id="t2"), "t3"))
    assert texts(view) == ["q1", "a1"]
    view.apply(stored(6, msg("user", "q2 again"), "t3"))
    view.apply(stored(7, msg("model", "a2 again"), "t3"))
    assert texts(view) == ["q1", "a1", "q2 again", "a2 again"]
    # A late event of the replaced turn (e.g. merged from another device) stays out too.
    view.apply(stored(8, msg("model", "late"), "t2"))
    assert texts(view) == ["q1", "a1", "q2 again", "a2 again"]


def test_an_empty_turn_id_never_leaves_out_events_without_one() -> None:
    view = ContextView()
    view.apply(stored(1, msg("user", "old"), ""))
    view.apply(stored(2, msg("model", "imported"), ""))
    view.apply(stored(3, SupersededEvent(superseded_turn_id=""), "x"))
    assert texts(view) == ["old", "imported"]
    assert last_turn(view) is None, "a turn without an id cannot be replaced"


def test_a_compacted_turn_cannot_be_replaced() -> None:
    view = ContextView()
    view.apply(stored(1, msg("user", "q1"), "t1"))
    view.apply(stored(2, msg("model", "a1"), "t1"))
    assert last_turn(view) is not None
    view.apply(stored(3, CompactionEvent(summary="S", covers_up_to_seq=2, kept_from_seq=3), "t1"))
    assert last_turn(view) is None


def test_the_log_keeps_the_replaced_turn_and_a_fresh_load_agrees(tmp_path: Path) -> None:
    log = SqliteEventLog(tmp_path / "koroku.db")
    try:
        log.append("default", [msg("user", "q1"), msg("model", "a1")], turn_id="t1")
        log.append("default", [msg("user", "find the zebra"), msg("model", "a2")], turn_id="t2")
        log.append(
            "default", [SupersededEvent(superseded_turn_id="t2", reason="edit")], turn_id="t3"
        )
        log.append("default", [msg("user", "q2 edited"), msg("model", "a2b")], turn_id="t3")
        live = log.load_live("default")
        view = ContextView.from_tail(live.boundary, live.events, live.unloaded)
        assert texts(view) == ["q1", "a1", "q2 edited", "a2b"]
        everything = log.entries("default")
        assert len(everything) == 7, "nothing was deleted"
        assert [h.seq for h in log.search("zebra")] == [3], "search still finds the old turn"
        marker = entry_view(everything[4]).marker
        assert marker is not None and "edited and sent again" in marker.title
    finally:
        log.close()

"""ContextView: projection after boundaries, turn structure, and repair of dangling calls."""

from __future__ import annotations

from koroku_desktop.domain.context import INTERRUPTED, SUMMARY_PREFIX, ContextView
from koroku_desktop.domain.events import (
    ClearedEvent,
    CompactionEvent,
    Event,
    MessageEvent,
    StoredEvent,
)
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, TextPart
from tests.support.builders import model as model_text
from tests.support.builders import user


def _stored(seq: int, event: Event) -> StoredEvent:
    return StoredEvent(seq=seq, conversation_id="c", created_at=float(seq), event=event)


def calls(*names: str) -> MessageEvent:
    return MessageEvent(
        role="model",
        parts=[FunctionCallPart(name=n, args={"i": i}, id=f"id{i}") for i, n in enumerate(names)],
    )


def responses(*names: str) -> MessageEvent:
    return MessageEvent(
        role="user",
        parts=[FunctionResponsePart(name=n, id=f"id{i}", response={}) for i, n in enumerate(names)],
    )


def test_projection_follows_appends_and_counts_calls_since_user_turn() -> None:
    view = ContextView()
    for seq, ev in enumerate(
        [user("a"), calls("bash", "read_file"), responses("bash", "read_file"), calls("bash")],
        start=1,
    ):
        view.apply(_stored(seq, ev))
    assert len(view.contents()) == 4
    assert view.tool_calls_since_user_turn() == 3
    assert [c.name for c in view.pending_calls()] == ["bash"]
    view.apply(_stored(5, user("next")))
    assert view.tool_calls_since_user_turn() == 0


def test_repair_answers_every_dangling_call_in_order_with_ids() -> None:
    view = ContextView()
    view.apply(_stored(1, user("go")))
    view.apply(_stored(2, calls("bash", "write_file")))
    repair = view.repair()
    assert repair is not None
    assert repair.origin == "repair"
    assert [(p.name, p.id, p.response) for p in repair.function_responses] == [
        ("bash", "id0", INTERRUPTED),
        ("write_file", "id1", INTERRUPTED),
    ]
    view.apply(_stored(3, repair))
    assert view.repair() is None


def test_compaction_keeps_the_tail_from_kept_from_seq_and_puts_the_summary_first() -> None:
    view = ContextView()
    for seq, ev in enumerate([user("a"), model_text("b"), user("c"), model_text("d")], start=1):
        view.apply(_stored(seq, ev))
    view.apply(_stored(5, CompactionEvent(summary="S", covers_up_to_seq=2, kept_from_seq=3)))
    contents = view.contents()
    assert isinstance(contents[0].parts[0], TextPart)
    assert contents[0].parts[0].text == SUMMARY_PREFIX + "S"
    assert [c.parts[0].text for c in contents[1:]] == ["c", "d"]  # type: ignore[union-attr]
    view.apply(_stored(6, user("e")))
    assert len(view.contents()) == 4
    assert view.boundary_seq == 5


def test_from_tail_matches_incremental_application() -> None:
    events: list[Event] = [user("a"), model_text("b"), ClearedEvent(), user("c")]
    incremental = ContextView()
    for seq, ev in enumerate(events, start=1):
        incremental.apply(_stored(seq, ev))
    rebuilt = ContextView.from_tail(_stored(3, events[2]), [_stored(4, events[3])])
    assert incremental.contents() == rebuilt.contents()
    assert incremental.boundary_seq == rebuilt.boundary_seq == 3
    assert [m.parts[0].text for m in rebuilt.contents()] == ["c"]  # type: ignore[union-attr]

"""A long conversation opens with rows for its newest events only; the rest are held and get
the same rows, page by page, as building them all at once would give."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from koroku_desktop.domain.events import LogEntry, MessageEvent, StoredEvent
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, TextPart
from koroku_desktop.ui.chat.items import build_items
from koroku_desktop.ui.chat.message_model import SHOWN_AT_ONCE, MessageModel, turn_start_before


def conversation(turns: int) -> list[LogEntry]:
    """Turns of: a question, a call, its result, an answer (4 events each)."""
    out: list[LogEntry] = []
    for t in range(turns):
        call = FunctionCallPart(name="read_file", args={"path": f"{t}.txt"}, id=f"c{t}")
        result = FunctionResponsePart(name="read_file", id=f"c{t}", response={"text": "x"})
        for event in (
            MessageEvent(role="user", origin="person", parts=[TextPart(text=f"question {t}")]),
            MessageEvent(role="model", origin="model", parts=[call]),
            MessageEvent(role="user", origin="tools", parts=[result]),
            MessageEvent(role="model", origin="model", parts=[TextPart(text=f"answer {t}")]),
        ):
            out.append(StoredEvent(len(out) + 1, "default", 0.0, event))
    return out


def shape(items: list[object]) -> list[tuple[object, ...]]:
    return [(i.kind, i.text, i.status, i.seq) for i in items]  # type: ignore[attr-defined]


def test_held_pages_give_the_same_rows_as_building_everything(qapp: QApplication) -> None:
    entries = conversation(400)  # 1,600 events
    model = MessageModel()
    model.set_entries(entries)
    shown = model.items()
    assert 0 < model.held < len(entries) - SHOWN_AT_ONCE + 4
    assert shown[0].kind == "user", "a page starts at a person's turn"
    assert all(i.status == "ok" for i in shown if i.kind == "tool"), "no call cut from its result"
    while model.held:
        assert model.prepend_held() > 0
    assert shape(model.items()) == shape(build_items(entries))
    assert model.oldest_seq == 1


def test_a_page_never_starts_inside_a_turn() -> None:
    entries = conversation(3)
    assert [turn_start_before(entries, at) for at in range(0, 13)] == [
        0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12,
    ]  # fmt: skip
    assert turn_start_before(entries, -5) == 0

"""The compaction cut over random histories: calls stay with their responses, the last user
turn is always kept, and the kept tail fits the budget whenever it can."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from koroku_desktop.agent.cut import (
    choose_cut,
    estimate_tokens,
    is_valid_cut,
    last_user_turn,
    recent_start,
)
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart
from tests.support.builders import model as _model_text
from tests.support.builders import user as _user

_text = st.text(alphabet="abcdefghij ", min_size=1, max_size=400)


@st.composite
def _step(draw: st.DrawFn, n: int) -> list[MessageEvent]:
    """One step of calls (parallel when several) and the content answering them."""
    names = draw(st.lists(st.sampled_from(["bash", "read_file", "recall"]), min_size=1, max_size=3))
    outputs = draw(st.lists(_text, min_size=len(names), max_size=len(names)))
    calls = MessageEvent(
        role="model",
        origin="model",
        parts=[
            FunctionCallPart(
                name=name,
                id=f"c{n}_{i}",
                args={"i": i},
                thought_signature="c2lnbmF0dXJl" if i == 0 else None,
            )
            for i, name in enumerate(names)
        ],
    )
    answers = MessageEvent(
        role="user",
        origin="tools",
        parts=[
            FunctionResponsePart(name=name, id=f"c{n}_{i}", response={"output": out})
            for i, (name, out) in enumerate(zip(names, outputs, strict=True))
        ],
    )
    return [calls, answers]


@st.composite
def histories(draw: st.DrawFn) -> list[MessageEvent]:
    """Turns of user text, sequential (and parallel) call steps and a final text answer.

    A history may start mid-turn (the kept tail of an earlier compaction) and its last turn
    may stop after tool responses (a budget stop or an error).
    """
    out: list[MessageEvent] = []
    if draw(st.booleans()):
        for _ in range(draw(st.integers(0, 2))):
            out.extend(draw(_step(len(out))))
        out.append(_model_text(draw(_text)))
    for _ in range(draw(st.integers(0, 6))):
        out.append(_user(draw(_text)))
        for _ in range(draw(st.integers(0, 4))):
            out.extend(draw(_step(len(out))))
        if draw(st.integers(0, 4)) > 0:  # sometimes the turn stops after tool responses
            out.append(_model_text(draw(_text)))
    return out


@settings(max_examples=400, deadline=None)
@given(histories(), st.integers(min_value=0, max_value=2_000))
def test_cut_keeps_whole_turns_and_never_splits_calls_from_responses(
    messages: list[MessageEvent], budget: int
) -> None:
    cut = choose_cut(messages, budget)
    latest = last_user_turn(messages)
    bound = len(messages) if latest is None else latest
    if cut is None:
        assert not any(is_valid_cut(messages, i) for i in range(1, bound + 1))
        return
    assert 0 < cut <= len(messages)
    kept = messages[cut:]
    # Never a response first, never calls separated from the content answering them.
    assert not (kept and kept[0].function_responses)
    assert not messages[cut - 1].function_calls
    for i, event in enumerate(messages):
        if event.function_calls:
            assert (i < cut) == (i + 1 < cut)
    # The last real user turn and everything after it is kept.
    if latest is not None:
        assert cut <= latest
        assert kept[latest - cut : latest - cut + 1] == [messages[latest]]
    # Within the budget whenever more than the minimum is kept, and nothing more would fit.
    sizes = [estimate_tokens(m) for m in messages]
    if cut < bound:
        assert sum(sizes[cut:]) <= budget
    assert not any(
        is_valid_cut(messages, j) and sum(sizes[j:]) <= budget
        for j in range(1, cut)
        if latest is None or messages[j].is_user_turn
    )
    # Whole turns are kept: the tail starts with a user turn whenever there is one.
    if latest is not None:
        assert kept[0].is_user_turn


def test_a_single_turn_cannot_be_compacted() -> None:
    turn = [_user("hi"), _model_text("hello")]
    assert choose_cut(turn, 0) is None


def test_a_parallel_step_is_kept_whole_or_summarised_whole() -> None:
    first = [_user("a" * 400), _model_text("b" * 400)]
    step = [
        MessageEvent(
            role="model",
            parts=[FunctionCallPart(name="bash", id="x"), FunctionCallPart(name="bash", id="y")],
        ),
        MessageEvent(
            role="user",
            parts=[
                FunctionResponsePart(name="bash", id="x", response={"o": "1" * 300}),
                FunctionResponsePart(name="bash", id="y", response={"o": "2" * 300}),
            ],
        ),
    ]
    history = [*first, _user("c"), *step, _model_text("done")]
    assert choose_cut(history, 10_000) == 2  # whole turns: all but the first one
    assert choose_cut(history, 1) == 2  # only the last turn: from the user turn on


@settings(max_examples=300, deadline=None)
@given(histories(), st.integers(min_value=0, max_value=2_000))
def test_recent_start_sends_whole_recent_turns(messages: list[MessageEvent], budget: int) -> None:
    start = recent_start(messages, budget)
    assert 0 <= start < max(1, len(messages))
    sizes = [estimate_tokens(m) for m in messages]
    if sum(sizes) <= budget:
        assert start == 0  # everything fits: everything is sent
    if start:
        # A whole turn first, never a response, never calls cut from their responses, and
        # the last user turn always sent.
        assert messages[start].is_user_turn and is_valid_cut(messages, start)
        latest = last_user_turn(messages)
        assert latest is not None and start <= latest

"""Whatever the log holds, the request built from it satisfies the fake's (Gemini's) rules."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import MessageEvent, RejectedEvent, StoredEvent
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, Part, TextPart
from koroku_desktop.domain.projection import project
from koroku_desktop.llm.mapping import content_to_sdk
from tests.fakes.gemini_rules import check_contents

SIG = "c2lnbmF0dXJl"
_names = st.sampled_from(["bash", "read_file", "recall"])
_ids = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"]))


def _text_part() -> st.SearchStrategy[Part]:
    return st.builds(
        TextPart,
        text=st.sampled_from(["", "hi", "some words"]),
        thought=st.booleans(),
        thought_signature=st.sampled_from([None, SIG]),
    )


def _call_part() -> st.SearchStrategy[Part]:
    return st.builds(
        FunctionCallPart,
        name=_names,
        id=_ids,
        args=st.just({"x": 1}),
        thought_signature=st.sampled_from([None, SIG]),
    )


def _response_part() -> st.SearchStrategy[Part]:
    return st.builds(FunctionResponsePart, name=_names, id=_ids, response=st.just({"ok": 1}))


@st.composite
def _message(draw: st.DrawFn, previous: list[MessageEvent]) -> MessageEvent:
    """Any content, often a well-formed answer to the calls just before it."""
    last = previous[-1] if previous else None
    if last is not None and last.function_calls and draw(st.booleans()):
        parts: list[Part] = [
            FunctionResponsePart(name=c.name, id=c.id, response={"ok": 1})
            for c in last.function_calls
        ]
        if draw(st.booleans()):
            parts = draw(st.permutations(parts))[: draw(st.integers(0, len(parts)))]
        return MessageEvent(role="user", origin="tools", parts=parts)
    role = draw(st.sampled_from(["user", "model"]))
    part = st.one_of(_text_part(), _call_part(), _response_part())
    return MessageEvent(role=role, parts=draw(st.lists(part, min_size=0, max_size=4)))


@st.composite
def logs(draw: st.DrawFn) -> list[MessageEvent]:
    out: list[MessageEvent] = []
    for _ in range(draw(st.integers(0, 12))):
        out.append(draw(_message(out)))
    return out


def _wire(contents: list[MessageEvent]) -> dict[str, Any]:
    """The request body the SDK sends for these contents (service field names)."""
    return {
        "contents": [
            content_to_sdk(c).model_dump(mode="json", by_alias=True, exclude_none=True)
            for c in contents
        ]
    }


def _question() -> MessageEvent:
    return MessageEvent(role="user", origin="person", parts=[TextPart(text="next question")])


@settings(max_examples=400, deadline=None)
@given(logs())
def test_any_log_projects_to_a_request_the_service_accepts(messages: list[MessageEvent]) -> None:
    numbered = list(enumerate([*messages, _question()], start=1))
    contents, fixes = project(numbered)
    assert check_contents(_wire(contents), {}) is None
    assert contents[-1].parts[0] == TextPart(text="next question")
    assert all(1 <= f.seq <= len(numbered) for f in fixes)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs(), st.data())
def test_the_live_view_sends_only_acceptable_requests(
    messages: list[MessageEvent], data: st.DataObject
) -> None:
    view = ContextView()
    seq = 0
    for event in [*messages, _question()]:
        seq += 1
        view.apply(StoredEvent(seq, "c", 0.0, event))
    if data.draw(st.booleans()) and seq > 1:
        rejected = data.draw(st.integers(1, seq - 1))
        seq += 1
        view.apply(StoredEvent(seq, "c", 0.0, RejectedEvent(rejected_seq=rejected, reason="big")))
    assert check_contents(_wire(view.contents()), {}) is None


def test_a_well_formed_log_is_sent_unchanged_without_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    call = FunctionCallPart(name="bash", id="a", args={}, thought_signature=SIG)
    messages = [
        _question(),
        MessageEvent(role="model", parts=[call]),
        MessageEvent(role="user", parts=[FunctionResponsePart(name="bash", id="a", response={})]),
        MessageEvent(
            role="model", parts=[TextPart(text="done"), TextPart(text="", thought_signature=SIG)]
        ),
    ]
    view = ContextView()
    for seq, event in enumerate(messages, start=1):
        view.apply(StoredEvent(seq, "c", 0.0, event))
    with caplog.at_level(logging.WARNING):
        assert view.contents() == messages
    assert not caplog.records


def test_fixes_name_their_seqs_and_are_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    view = ContextView()
    events = [
        _question(),
        MessageEvent(role="model", parts=[FunctionCallPart(name="bash", id="a", args={})]),
        _question(),
    ]
    for seq, event in enumerate(events, start=1):
        view.apply(StoredEvent(seq * 10, "c", 0.0, event))
    with caplog.at_level(logging.WARNING):
        first = view.contents()
        view.contents()
    assert [r.getMessage() for r in caplog.records] == [
        "request fixed at seq 20: answered call 'bash' that had no response"
    ]
    assert first[2].function_responses[0].response == {
        "error": "no response was recorded for this call"
    }

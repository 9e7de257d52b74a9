"""The upcaster chain: every historical payload shape loads, and a chain runs step by step."""

from __future__ import annotations

from typing import Any

import pytest

from koroku_desktop.domain.events import SCHEMA_VERSION, ClearedEvent, CompactionEvent, MessageEvent
from koroku_desktop.domain.upcasting import UPCASTERS, UpcastError, upcast, upcast_payload

# Every shape Koroku has written, oldest first (all schema version 1 so far: later fields
# came with defaults, so no step was needed). Tutorial rows are converted by
# maintenance/tutorial_import.py when imported and never reach `upcast`.
HISTORICAL: list[tuple[str, dict[str, Any]]] = [
    ("message", {"role": "user", "parts": [{"kind": "text", "text": "hi"}]}),
    ("message", {"role": "model", "parts": [{"kind": "text", "text": "yo"}], "kind": "message"}),
    (
        "message",
        {
            "kind": "message",
            "schema_version": 1,
            "role": "model",
            "parts": [{"kind": "function_call", "name": "ls", "args": {}}],
            "usage": {"prompt_tokens": 3},
        },
    ),
    (
        "message",
        {"schema_version": 1, "role": "user", "origin": "repair", "parts": []},
    ),
    ("compaction", {"summary": "s", "covers_up_to_seq": 3, "kept_from_seq": 4}),
    (
        "compaction",
        {
            "kind": "compaction",
            "schema_version": 1,
            "summary": "s",
            "covers_up_to_seq": 3,
            "kept_from_seq": 4,
            "tokens_before": 10,
            "tokens_after": 2,
        },
    ),
    ("cleared", {}),
    ("cleared", {"kind": "cleared", "schema_version": 1}),
]
EXPECTED = {"message": MessageEvent, "compaction": CompactionEvent, "cleared": ClearedEvent}


@pytest.mark.parametrize(("kind", "payload"), HISTORICAL)
def test_every_historical_shape_loads_as_the_current_event(
    kind: str, payload: dict[str, Any]
) -> None:
    event = upcast(kind, payload)
    assert isinstance(event, EXPECTED[kind])
    assert event.schema_version == SCHEMA_VERSION


def test_every_kind_has_a_complete_chain_up_to_the_current_version() -> None:
    for kind, steps in UPCASTERS.items():
        assert sorted(steps) == list(range(1, SCHEMA_VERSION)), kind


def test_a_chain_runs_each_step_in_order() -> None:
    chain = {
        1: lambda d: {k: v for k, v in d.items() if k != "body"} | {"text": d["body"]},  # v2
        2: lambda d: {**d, "words": len(d["text"].split())},  # v3 added a count
    }
    out = upcast_payload("note", {"body": "two words"}, chain=chain, current=3)
    assert out == {"kind": "note", "schema_version": 3, "text": "two words", "words": 2}
    # A payload already at v2 skips the first step.
    mid = upcast_payload("note", {"schema_version": 2, "text": "a b c"}, chain=chain, current=3)
    assert mid["words"] == 3


def test_a_gap_or_a_future_version_is_an_error() -> None:
    with pytest.raises(UpcastError, match="no upcaster"):
        upcast_payload("note", {"schema_version": 1}, chain={}, current=2)
    with pytest.raises(UpcastError, match="newer"):
        upcast_payload("note", {"schema_version": 3}, chain={}, current=2)
    with pytest.raises(UpcastError):
        upcast_payload("note", {"schema_version": "x"}, chain={}, current=2)
    with pytest.raises(UpcastError):
        upcast_payload("note", {"kind": "other"}, chain={}, current=1)

"""Every part kind and event survives JSON with its signature bytes intact; old shapes upcast."""

from __future__ import annotations

import json
import os

import pytest

from koroku_desktop.domain.events import EVENT_ADAPTER, MessageEvent, Usage, dump_event
from koroku_desktop.domain.parts import (
    PART_ADAPTER,
    CodeExecutionResultPart,
    ExecutableCodePart,
    FileDataPart,
    FunctionCallPart,
    FunctionResponsePart,
    InlineDataPart,
    Part,
    TextPart,
    UnknownPart,
    encode_signature,
)
from koroku_desktop.domain.upcasting import UpcastError, upcast

SIG = os.urandom(48)


def every_part() -> list[Part]:
    sig = encode_signature(SIG)
    return [
        TextPart(text="thinking", thought=True, thought_signature=sig),
        TextPart(text="hello"),
        FunctionCallPart(
            name="bash",
            args={"command": "ls", "n": [1, {"a": None}]},
            id="c1",
            thought_signature=sig,
        ),
        FunctionResponsePart(
            name="bash", response={"exit_code": 0}, id="c1", call_args={"command": "ls"}
        ),
        InlineDataPart(mime_type="image/png", data="iVBORw0KGgo="),
        FileDataPart(mime_type="application/pdf", file_uri="files/abc"),
        ExecutableCodePart(language="PYTHON", code="print(1)"),
        CodeExecutionResultPart(outcome="OUTCOME_OK", output="1\n"),
        UnknownPart(raw={"futureThing": {"x": 1}, "thoughtSignature": "AAAA"}),
    ]


@pytest.mark.parametrize("part", every_part(), ids=lambda p: p.kind)
def test_part_json_round_trip_keeps_signature_bytes(part: Part) -> None:
    again = PART_ADAPTER.validate_json(PART_ADAPTER.dump_json(part))
    assert again == part
    assert again.signature_bytes() == part.signature_bytes()


def test_message_event_round_trip_through_payload_json() -> None:
    event = MessageEvent(
        role="model", parts=every_part(), usage=Usage(prompt_tokens=10, output_tokens=3, model="m")
    )
    payload = json.loads(json.dumps(dump_event(event)))
    again = upcast("message", payload)
    assert again == event
    assert isinstance(again, MessageEvent)
    assert again.parts[2].signature_bytes() == SIG


def test_upcast_rejects_unknown_kinds_and_future_versions() -> None:
    with pytest.raises(UpcastError):
        upcast("mystery", {})
    with pytest.raises(UpcastError):
        upcast("message", {"role": "user", "parts": [], "schema_version": 99})
    with pytest.raises(UpcastError):
        upcast("message", {"role": "robot", "parts": []})


def test_upcast_fills_kind_and_version_of_old_payloads() -> None:
    event = upcast("message", {"role": "user", "parts": [{"kind": "text", "text": "hi"}]})
    assert EVENT_ADAPTER.dump_python(event)["schema_version"] == 1

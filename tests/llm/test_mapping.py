"""Every part kind survives domain -> JSON -> domain -> SDK -> wire -> fake echo -> domain."""

from __future__ import annotations

import base64
import os
from typing import Any

from google.genai import types

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import (
    PARTS_ADAPTER,
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
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.llm.mapping import part_from_sdk, part_to_sdk
from tests.fakes import FakeGemini


def signature() -> str:
    """A random signature whose standard base64 needs the characters URL-safe base64 changes."""
    while True:
        raw = os.urandom(64)
        encoded = encode_signature(raw)
        assert encoded is not None
        if "+" in encoded and "/" in encoded:
            return encoded


def user_parts() -> list[Part]:
    return [
        TextPart(text="look at this"),
        InlineDataPart(mime_type="image/png", data=base64.b64encode(os.urandom(40)).decode()),
        FileDataPart(mime_type="application/pdf", file_uri="https://files.example/abc"),
    ]


def model_parts() -> list[Part]:
    return [
        TextPart(text="thinking about it", thought=True, thought_signature=signature()),
        TextPart(text="Here you go."),
        FunctionCallPart(
            name="bash",
            args={"command": "ls -la", "n": [1, 2.5, None]},
            id="c1",
            thought_signature=signature(),
        ),
        ExecutableCodePart(language="PYTHON", code="print(1)"),
        CodeExecutionResultPart(outcome="OUTCOME_OK", output="1\n"),
        UnknownPart(
            raw={"tool_call": {"id": "t1", "tool_type": "GOOGLE_SEARCH_WEB", "args": {"q": "x"}}},
            thought_signature=signature(),
        ),
        UnknownPart(
            raw={
                "file_data": {"file_uri": "https://v.example/1", "mime_type": "video/mp4"},
                "video_metadata": {"start_offset": "1s", "end_offset": "3s"},
            }
        ),
        TextPart(text="", thought_signature=signature()),
    ]


def response_parts() -> list[Part]:
    return [
        FunctionResponsePart(
            name="bash", response={"output": "a b"}, id="c1", call_args={"command": "ls -la"}
        )
    ]


def conversation() -> list[MessageEvent]:
    return [
        MessageEvent(role="user", parts=user_parts(), origin="person"),
        MessageEvent(role="model", parts=model_parts(), origin="model"),
        MessageEvent(role="user", parts=response_parts(), origin="tools"),
    ]


def sig_bytes(parts: list[Part]) -> list[bytes | None]:
    return [p.signature_bytes() for p in parts]


def test_json_round_trip_keeps_every_part() -> None:
    for parts in (user_parts(), model_parts(), response_parts()):
        dumped: Any = PARTS_ADAPTER.dump_python(parts, mode="json")
        assert PARTS_ADAPTER.validate_python(dumped) == parts


def test_sdk_round_trip_keeps_every_part() -> None:
    for parts in (user_parts(), model_parts()):
        back = [part_from_sdk(part_to_sdk(p)) for p in parts]
        assert back == parts
        assert sig_bytes(back) == sig_bytes(parts)


def test_call_args_are_never_sent() -> None:
    sdk = part_to_sdk(response_parts()[0])
    assert sdk.function_response is not None
    assert sdk.function_response.model_dump(exclude_none=True) == {
        "id": "c1",
        "name": "bash",
        "response": {"output": "a b"},
    }


def test_sdk_parts_with_unmodelled_fields_become_unknown() -> None:
    sdk = types.Part(text="hi", part_metadata={"source": "x"})
    part = part_from_sdk(sdk)
    assert isinstance(part, UnknownPart)
    assert part.raw == {"text": "hi", "part_metadata": {"source": "x"}}
    assert part_to_sdk(part) == sdk
    thought_image = types.Part(
        inline_data=types.Blob(mime_type="image/png", data=b"\x00\x01"), thought=True
    )
    assert isinstance(part_from_sdk(thought_image), UnknownPart)
    assert part_to_sdk(part_from_sdk(thought_image)) == thought_image


async def test_wire_round_trip_equals_what_was_sent(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    contents = conversation()
    for index in (0, 1, 2):
        fake_gemini.reply_echo(index)
        request = ModelRequest(model="m", system_instruction="", contents=contents)
        reply = await model.generate(request)
        expected = contents[index].parts
        if index == 2:
            expected = [p.model_copy(update={"call_args": None}) for p in expected]
        assert reply.parts == expected
        assert sig_bytes(reply.parts) == sig_bytes(expected)
    sent = fake_gemini.generate_requests()[-1].body["contents"]
    for wire, part in zip(sent[1]["parts"], contents[1].parts, strict=True):
        on_wire = wire.get("thoughtSignature")
        decoded = base64.urlsafe_b64decode(on_wire) if on_wire else None
        assert decoded == part.signature_bytes()
    wire_response = sent[2]["parts"][0]["functionResponse"]
    assert wire_response == {"id": "c1", "name": "bash", "response": {"output": "a b"}}

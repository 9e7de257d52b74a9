"""The fake Gemini server, driven by the real google-genai client: format and strictness."""

from __future__ import annotations

import base64
import os
import time
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from tests.fakes import FakeGemini, TextReply
from tests.fakes.gemini_replies import ReceivedRequest

MODEL = "gemini-test"


def client(api_key: str = "test-key") -> genai.Client:
    """A real SDK client; the endpoint comes from GOOGLE_GEMINI_BASE_URL (set by the fixture)."""
    return genai.Client(api_key=api_key)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def stream(
    c: genai.Client, contents: list[types.Content]
) -> list[types.GenerateContentResponse]:
    return [
        chunk
        async for chunk in await c.aio.models.generate_content_stream(
            model=MODEL, contents=contents
        )
    ]


def responses_for(model_content: types.Content, **override: Any) -> types.Content:
    parts = []
    for part in model_content.parts or []:
        call = part.function_call
        if call is not None:
            fields = {"id": call.id, "name": call.name, "response": {"output": "done"}}
            fields.update(override)
            parts.append(types.Part(function_response=types.FunctionResponse(**fields)))
    return types.Content(role="user", parts=parts)


async def call_turn(
    fake: FakeGemini, c: genai.Client, *calls: tuple[str, dict[str, Any]]
) -> list[types.Content]:
    """A user turn and the model's call content, as the SDK returned it (non-streaming)."""
    fake.reply_calls(*calls)
    contents = [user("do it")]
    response = await c.aio.models.generate_content(model=MODEL, contents=contents)
    assert response.candidates and response.candidates[0].content
    return [*contents, response.candidates[0].content]


async def test_paths_use_the_sdk_version_and_methods(fake_gemini: FakeGemini) -> None:
    c = client()
    await c.aio.models.generate_content(model=MODEL, contents="hi")
    await stream(c, [user("hi")])
    await c.aio.models.count_tokens(model=MODEL, contents="hi")
    paths = [r.path for r in fake_gemini.requests]
    assert paths == [
        f"/v1/models/{MODEL}:generateContent",
        f"/v1/models/{MODEL}:streamGenerateContent?alt=sse",
        f"/v1/models/{MODEL}:countTokens",
    ]


async def test_stream_text_in_chunks_then_signed_empty_part(fake_gemini: FakeGemini) -> None:
    fake_gemini.reply_text("Hello there, friend", thought="Let me think", chunks=3)
    chunks = await stream(client(), [user("hi")])
    parts = [p for ch in chunks for p in ch.candidates[0].content.parts]  # type: ignore[index, union-attr]
    assert parts[0].thought is True and parts[0].text == "Let me think"
    texts = [p.text for p in parts[1:-1]]
    assert len(texts) == 3 and "".join(t or "" for t in texts) == "Hello there, friend"
    assert all(p.thought_signature is None for p in parts[:-1])
    assert parts[-1].text == "" and parts[-1].thought_signature
    assert all(ch.usage_metadata and ch.usage_metadata.prompt_token_count for ch in chunks)
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]


async def test_default_reply_is_ok_and_signed_on_last_part(fake_gemini: FakeGemini) -> None:
    response = await client().aio.models.generate_content(model=MODEL, contents="hi")
    assert response.text == "ok"
    parts = response.candidates[0].content.parts  # type: ignore[index, union-attr]
    assert parts and parts[-1].thought_signature
    usage = response.usage_metadata
    assert usage and usage.total_token_count and usage.candidates_token_count


async def test_parallel_calls_have_ids_and_one_signature(fake_gemini: FakeGemini) -> None:
    contents = await call_turn(
        fake_gemini, client(), ("bash", {"command": "ls"}), ("read_file", {"path": "a"})
    )
    parts = contents[-1].parts or []
    calls = [p.function_call for p in parts if p.function_call]
    assert [c.name for c in calls] == ["bash", "read_file"]
    assert all(c.id for c in calls) and calls[0].id != calls[1].id
    assert [bool(p.thought_signature) for p in parts] == [True, False]


async def test_follow_up_with_calls_and_responses_is_accepted(fake_gemini: FakeGemini) -> None:
    c = client()
    contents = await call_turn(
        fake_gemini, c, ("bash", {"command": "ls"}), ("read_file", {"path": "a"})
    )
    contents.append(responses_for(contents[-1]))
    fake_gemini.reply_text("all done")
    response = await c.aio.models.generate_content(model=MODEL, contents=contents)
    assert response.text == "all done"


def _without_signature(content: types.Content) -> types.Content:
    parts = [p.model_copy(update={"thought_signature": None}) for p in content.parts or []]
    return types.Content(role="model", parts=parts)


def _with_other_signature(content: types.Content) -> types.Content:
    parts = list(content.parts or [])
    parts[0] = parts[0].model_copy(update={"thought_signature": os.urandom(64)})
    return types.Content(role="model", parts=parts)


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (_without_signature, "missing a thought_signature"),
        (_with_other_signature, "not the one that was issued"),
    ],
)
async def test_tampered_signature_is_rejected(
    fake_gemini: FakeGemini, tamper: Any, expected: str
) -> None:
    c = client()
    contents = await call_turn(fake_gemini, c, ("bash", {"command": "ls"}))
    contents[-1] = tamper(contents[-1])
    contents.append(responses_for(contents[-1]))
    with pytest.raises(errors.ClientError) as caught:
        await c.aio.models.generate_content(model=MODEL, contents=contents)
    assert caught.value.code == 400 and caught.value.status == "INVALID_ARGUMENT"
    assert expected in (caught.value.message or "")


async def test_signature_bytes_survive_the_sdks_url_safe_base64(fake_gemini: FakeGemini) -> None:
    c = client()
    contents = await call_turn(fake_gemini, c, ("bash", {"command": "ls"}))
    issued = contents[-1].parts[0].thought_signature  # type: ignore[index]
    contents.append(responses_for(contents[-1]))
    await c.aio.models.generate_content(model=MODEL, contents=contents)
    sent = fake_gemini.generate_requests()[-1].body["contents"][1]["parts"][0]["thoughtSignature"]
    assert base64.urlsafe_b64decode(sent) == issued


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"name": "other"}, "does not match function call name"),
        ({"id": "wrong-id"}, "does not match function call id"),
    ],
)
async def test_mismatched_responses_are_rejected(
    fake_gemini: FakeGemini, change: dict[str, str], expected: str
) -> None:
    c = client()
    contents = await call_turn(fake_gemini, c, ("bash", {"command": "ls"}))
    contents.append(responses_for(contents[-1], **change))
    with pytest.raises(errors.ClientError, match=expected):
        await c.aio.models.generate_content(model=MODEL, contents=contents)


async def test_missing_response_count_is_rejected(fake_gemini: FakeGemini) -> None:
    c = client()
    contents = await call_turn(
        fake_gemini, c, ("bash", {"command": "ls"}), ("bash", {"command": "pwd"})
    )
    answer = responses_for(contents[-1])
    contents.append(types.Content(role="user", parts=(answer.parts or [])[:1]))
    with pytest.raises(errors.ClientError, match="number of function response parts"):
        await c.aio.models.generate_content(model=MODEL, contents=contents)


async def test_misplaced_response_and_unanswered_calls_are_rejected(
    fake_gemini: FakeGemini,
) -> None:
    c = client()
    contents = await call_turn(fake_gemini, c, ("bash", {"command": "ls"}))
    misplaced = [*contents, user("wait"), responses_for(contents[-1])]
    with pytest.raises(errors.ClientError, match="immediately"):
        await c.aio.models.generate_content(model=MODEL, contents=misplaced)
    with pytest.raises(errors.ClientError, match="not answered"):
        await c.aio.models.generate_content(model=MODEL, contents=contents)


async def test_rejected_request_does_not_consume_the_script(fake_gemini: FakeGemini) -> None:
    c = client()
    contents = await call_turn(fake_gemini, c, ("bash", {"command": "ls"}))
    fake_gemini.reply_text("kept")
    with pytest.raises(errors.ClientError):
        await c.aio.models.generate_content(model=MODEL, contents=contents)
    contents.append(responses_for(contents[-1]))
    response = await c.aio.models.generate_content(model=MODEL, contents=contents)
    assert response.text == "kept"


async def test_bad_key_is_api_key_invalid(fake_gemini: FakeGemini) -> None:
    with pytest.raises(errors.ClientError) as caught:
        await client("bad-key").aio.models.generate_content(model=MODEL, contents="hi")
    assert caught.value.code == 400 and "API_KEY_INVALID" in str(caught.value.details)


async def test_fail_then_default(fake_gemini: FakeGemini) -> None:
    fake_gemini.fail(503, times=1).fail(429)
    c = client()
    with pytest.raises(errors.ServerError) as server_error:
        await c.aio.models.generate_content(model=MODEL, contents="hi")
    assert server_error.value.code == 503 and server_error.value.status == "UNAVAILABLE"
    with pytest.raises(errors.ClientError) as quota:
        await c.aio.models.generate_content(model=MODEL, contents="hi")
    assert quota.value.status == "RESOURCE_EXHAUSTED"
    assert (await c.aio.models.generate_content(model=MODEL, contents="hi")).text == "ok"


async def test_drop_connection_and_mid_stream_drop(fake_gemini: FakeGemini) -> None:
    c = client()
    fake_gemini.drop_connection()
    with pytest.raises(Exception, match=r"(?i)disconnect|closed|reset"):
        await c.aio.models.generate_content(model=MODEL, contents="hi")
    fake_gemini.drop_connection(mid_stream=True).reply_text("one two three four", chunks=4)
    with pytest.raises(Exception):  # noqa: B017 - the transport's own error type
        await stream(c, [user("hi")])
    assert (await c.aio.models.generate_content(model=MODEL, contents="hi")).text == "ok"


async def test_delay_holds_the_answer(fake_gemini: FakeGemini) -> None:
    fake_gemini.delay(0.2).reply_text("late")
    started = time.monotonic()
    response = await client().aio.models.generate_content(model=MODEL, contents="hi")
    assert response.text == "late" and time.monotonic() - started >= 0.2
    fake_gemini.delay(0.5)
    impatient = genai.Client(api_key="k", http_options=types.HttpOptions(timeout=100))
    with pytest.raises(Exception) as caught:
        await impatient.aio.models.generate_content(model=MODEL, contents="hi")
    assert "Timeout" in type(caught.value).__name__


async def test_reply_with_answers_from_the_request(fake_gemini: FakeGemini) -> None:
    def answer(request: ReceivedRequest) -> TextReply:
        if not request.has_tools and "summarize" in request.system_text:
            return TextReply("SUMMARY")
        return TextReply(f"echo {request.last_text()}")

    fake_gemini.reply_with(answer, times=2)
    c = client()
    config = types.GenerateContentConfig(system_instruction="summarize the chat")
    summary = await c.aio.models.generate_content(model=MODEL, contents="long chat", config=config)
    assert summary.text == "SUMMARY"
    assert (await c.aio.models.generate_content(model=MODEL, contents="x")).text == "echo x"


async def test_endless_calls_and_count_tokens(fake_gemini: FakeGemini) -> None:
    fake_gemini.endless_calls("bash", {"command": "echo x"})
    c = client()
    bash = types.Tool(
        function_declarations=[types.FunctionDeclaration(name="bash", description="run")]
    )
    config = types.GenerateContentConfig(tools=[bash])
    for _ in range(3):
        response = await c.aio.models.generate_content(model=MODEL, contents="go", config=config)
        assert response.function_calls and response.function_calls[0].name == "bash"
    without_tools = await c.aio.models.generate_content(model=MODEL, contents="go")
    assert not without_tools.function_calls and without_tools.text
    counted = await c.aio.models.count_tokens(model=MODEL, contents="some words to count")
    assert counted.total_tokens and counted.total_tokens > 0
    fake_gemini.reset()
    assert fake_gemini.requests == []
    assert (await c.aio.models.generate_content(model=MODEL, contents="hi")).text == "ok"


async def test_stopped_server_refuses_connections() -> None:
    fake = FakeGemini().start()
    base_url = fake.base_url
    fake.stop()
    c = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=base_url))
    with pytest.raises(Exception, match=r"(?i)connect"):
        await c.aio.models.generate_content(model=MODEL, contents="hi")

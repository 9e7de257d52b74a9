"""GeminiChatModel against the fake server through the real SDK: replies, history, errors."""

from __future__ import annotations

import pytest

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest, ToolSpec
from koroku_desktop.domain.parts import (
    FunctionCallPart,
    FunctionResponsePart,
    Part,
    TextPart,
    encode_signature,
)
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.llm.stream import append_part
from tests.fakes import FakeGemini
from tests.llm.conftest import make_model

BASH = ToolSpec(
    name="bash",
    description="Run a shell command.",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}},
)


def ask(text: str, *history: MessageEvent, tools: bool = True) -> ModelRequest:
    contents = [*history, MessageEvent(role="user", parts=[TextPart(text=text)], origin="person")]
    return ModelRequest(
        model="gemini-test",
        system_instruction="You are Koroku.",
        contents=contents,
        tools=[BASH] if tools else [],
    )


def answers(reply: MessageEvent, **override: object) -> MessageEvent:
    parts: list[Part] = [
        FunctionResponsePart(
            name=str(override.get("name", call.name)),
            id=str(override.get("id", call.id)),
            response={"output": "done"},
            call_args=call.args,
        )
        for call in reply.function_calls
    ]
    return MessageEvent(role="user", parts=parts, origin="tools")


async def call_step(model: GeminiChatModel, fake: FakeGemini) -> list[MessageEvent]:
    """A user turn and the model's reply with two parallel calls."""
    fake.reply_calls(("bash", {"command": "ls"}), ("bash", {"command": "pwd"}))
    request = ask("list files")
    reply = await model.generate(request)
    return [*request.contents, reply]


# -- replies ------------------------------------------------------------------------------


async def test_streamed_text_is_aggregated_and_keeps_the_signed_empty_part(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_text("Hello there, my friend.", thought="The user greets me.", chunks=4)
    deltas: list[str] = []
    reply = await model.generate(ask("hi"), deltas.append)
    assert len(deltas) == 4 and "".join(deltas) == "Hello there, my friend."
    assert reply.role == "model" and reply.origin == "model"
    thought, text, signed = reply.parts
    assert thought == TextPart(text="The user greets me.", thought=True)
    assert text == TextPart(text="Hello there, my friend.")
    assert isinstance(signed, TextPart) and signed.text == "" and signed.thought_signature
    usage = reply.usage
    assert usage is not None and usage.model == "gemini-test"
    assert usage.prompt_tokens and usage.output_tokens and usage.thoughts_tokens
    assert usage.latency_ms is not None and usage.latency_ms > 0


async def test_parallel_calls_keep_ids_and_the_one_signature(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    reply = (await call_step(model, fake_gemini))[-1]
    first, second = reply.parts
    assert isinstance(first, FunctionCallPart) and isinstance(second, FunctionCallPart)
    assert (first.name, first.args, second.args) == ("bash", {"command": "ls"}, {"command": "pwd"})
    assert first.id and second.id and first.id != second.id
    assert first.thought_signature and second.thought_signature is None


async def test_request_carries_system_tools_and_thinking(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    await model.generate(ask("hi"))
    await model.generate(ask("hi", tools=False))
    with_tools, without = (r.body for r in fake_gemini.requests)
    assert with_tools["systemInstruction"]["parts"] == [{"text": "You are Koroku."}]
    declaration = with_tools["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "bash"
    assert declaration["parameters_json_schema"] == BASH.parameters
    assert with_tools["generationConfig"]["thinkingConfig"] == {"include_thoughts": True}
    assert "tools" not in without
    assert fake_gemini.requests[0].path.endswith(":streamGenerateContent?alt=sse")


async def test_follow_up_with_calls_and_responses_is_accepted(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    history = await call_step(model, fake_gemini)
    history.append(answers(history[-1]))
    fake_gemini.reply_text("Two commands ran.")
    request = ModelRequest(model="gemini-test", system_instruction="s", contents=history)
    reply = await model.generate(request)
    assert reply.parts[0] == TextPart(text="Two commands ran.")
    sent = fake_gemini.generate_requests()[-1].body["contents"][2]["parts"]
    assert [p["functionResponse"]["id"] for p in sent] == [c.id for c in history[1].function_calls]
    assert all("call_args" not in str(p) for p in sent)


def _strip_signatures(reply: MessageEvent) -> MessageEvent:
    parts = [p.model_copy(update={"thought_signature": None}) for p in reply.parts]
    return reply.model_copy(update={"parts": parts})


def _swap_signature(reply: MessageEvent) -> MessageEvent:
    parts = list(reply.parts)
    parts[0] = parts[0].model_copy(update={"thought_signature": encode_signature(b"forged")})
    return reply.model_copy(update={"parts": parts})


@pytest.mark.parametrize("tamper", [_strip_signatures, _swap_signature])
async def test_tampered_signature_is_a_bad_request(
    model: GeminiChatModel, fake_gemini: FakeGemini, tamper: object
) -> None:
    history = await call_step(model, fake_gemini)
    history[-1] = tamper(history[-1])  # type: ignore[operator]
    history.append(answers(history[-1]))
    with pytest.raises(ModelError) as caught:
        await model.generate(ModelRequest(model="m", system_instruction="", contents=history))
    assert caught.value.kind == "bad_request" and caught.value.status == 400
    assert "thought_signature" in caught.value.message


async def test_mismatched_and_misplaced_responses_are_bad_requests(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    history = await call_step(model, fake_gemini)
    wrong_ids = [*history, answers(history[-1], id="nope")]
    misplaced = [*history, ask("wait").contents[0], answers(history[-1])]
    unanswered = history
    for contents in (wrong_ids, misplaced, unanswered):
        with pytest.raises(ModelError) as caught:
            await model.generate(ModelRequest(model="m", system_instruction="", contents=contents))
        assert caught.value.kind == "bad_request"
        assert "function" in caught.value.message


def test_aggregation_merges_only_unsigned_text_of_the_same_kind() -> None:
    parts: list[Part] = []
    incoming: list[Part] = [
        TextPart(text="a", thought=True),
        TextPart(text="b", thought=True),
        TextPart(text="c"),
        TextPart(text="d", thought_signature="c2ln"),
        TextPart(text="e"),
        TextPart(text="f"),
        FunctionCallPart(name="x", id="1"),
        TextPart(text="", thought_signature="c2lnMg=="),
    ]
    for part in incoming:
        append_part(parts, part)
    assert parts == [
        TextPart(text="ab", thought=True),
        TextPart(text="c"),
        TextPart(text="d", thought_signature="c2ln"),
        TextPart(text="ef"),
        FunctionCallPart(name="x", id="1"),
        TextPart(text="", thought_signature="c2lnMg=="),
    ]


# -- errors -------------------------------------------------------------------------------


async def test_503_twice_then_success(model: GeminiChatModel, fake_gemini: FakeGemini) -> None:
    fake_gemini.fail(503, times=2).reply_text("finally")
    reply = await model.generate(ask("hi"))
    assert reply.parts[0] == TextPart(text="finally")
    assert len(fake_gemini.requests) == 3


async def test_persistent_5xx_is_unavailable(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    fake_gemini.fail(500, times=3)
    with pytest.raises(ModelError) as caught:
        await model.generate(ask("hi"))
    assert (caught.value.kind, caught.value.status) == ("unavailable", 500)
    assert len(fake_gemini.requests) == 3


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "quota"), (400, "bad_request"), (404, "bad_request"), (403, "auth")]
)
async def test_status_codes_map_to_kinds(fake_gemini: FakeGemini, status: int, kind: str) -> None:
    model = make_model(retry_attempts=1)
    fake_gemini.fail(status, message=f"service says {status}")
    with pytest.raises(ModelError) as caught:
        await model.generate(ask("hi"))
    assert (caught.value.kind, caught.value.status) == (kind, status)
    assert f"service says {status}" in caught.value.message


async def test_bad_key_is_auth_and_the_key_never_shows(fake_gemini: FakeGemini) -> None:
    with pytest.raises(ModelError) as caught:
        await make_model("bad-key").generate(ask("hi"))
    assert caught.value.kind == "auth" and "API key not valid" in caught.value.message
    secret = "AIzaSecretKey-123456"
    fake_gemini.fail(400, message=f"API key {secret} not valid. Please pass a valid API key.")
    with pytest.raises(ModelError) as leaked:
        await make_model(secret).generate(ask("hi"))
    assert secret not in str(leaked.value) and "[api key]" in str(leaked.value)


async def test_missing_key_is_auth_without_a_request(fake_gemini: FakeGemini) -> None:
    with pytest.raises(ModelError) as caught:
        await make_model("  ").generate(ask("hi"))
    assert caught.value.kind == "auth"
    assert fake_gemini.requests == []


async def test_dropped_connection_is_network(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    fake_gemini.drop_connection()
    with pytest.raises(ModelError) as caught:
        await model.generate(ask("hi"))
    assert caught.value.kind == "network"
    fake_gemini.drop_connection(mid_stream=True).reply_text("a b c d", chunks=4)
    deltas: list[str] = []
    with pytest.raises(ModelError) as mid:
        await model.generate(ask("hi"), deltas.append)
    assert mid.value.kind == "network" and deltas == ["a "]


async def test_timeout_is_network(fake_gemini: FakeGemini) -> None:
    fake_gemini.delay(2)
    model = make_model(timeout_s=0.3, retry_attempts=1)
    with pytest.raises(ModelError) as caught:
        await model.generate(ask("hi"))
    assert caught.value.kind == "network" and "timed out" in caught.value.message


async def test_server_down_is_network() -> None:
    fake = FakeGemini().start()
    base_url = fake.base_url
    fake.stop()
    model = make_model(base_url=base_url, retry_attempts=2)
    with pytest.raises(ModelError) as caught:
        await model.generate(ask("hi"))
    assert caught.value.kind == "network" and "connect" in caught.value.message
    with pytest.raises(ModelError):
        await model.check_connection()


async def test_base_url_overrides_the_environment(fake_gemini: FakeGemini) -> None:
    with FakeGemini() as other:
        other.reply_text("from the other one")
        model = make_model(base_url=other.base_url)
        reply = await model.generate(ask("hi"))
    assert reply.parts[0] == TextPart(text="from the other one")
    assert fake_gemini.requests == []


# -- counting and checking ----------------------------------------------------------------


async def test_count_tokens_includes_system_and_tools(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    with_extras = await model.count_tokens(ask("hello " * 50))
    bare = await model.count_tokens(
        ModelRequest(model="m", system_instruction="", contents=ask("hello " * 50).contents)
    )
    assert with_extras > bare > 0
    assert all(r.method == "countTokens" for r in fake_gemini.requests)


async def test_check_connection(model: GeminiChatModel, fake_gemini: FakeGemini) -> None:
    sentence = await model.check_connection()
    assert sentence.startswith("Connected to Gemini")
    with pytest.raises(ModelError) as caught:
        await make_model("bad-key").check_connection()
    assert caught.value.kind == "auth"

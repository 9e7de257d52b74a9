"""How a reply ended is never hidden: finish reasons, RetryInfo delays, block messages."""

from __future__ import annotations

import pytest

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.llm.gemini import GeminiChatModel
from tests.fakes import FakeGemini
from tests.fakes.gemini_replies import TextReply, b64, new_signature
from tests.llm.conftest import make_model


def ask(text: str) -> ModelRequest:
    user = MessageEvent(role="user", parts=[TextPart(text=text)], origin="person")
    return ModelRequest(model="gemini-test", system_instruction="", contents=[user])


@pytest.mark.parametrize("reason", ["MAX_TOKENS", "SAFETY", "RECITATION"])
async def test_finish_reason_is_stored_on_the_reply(
    model: GeminiChatModel, fake_gemini: FakeGemini, reason: str
) -> None:
    fake_gemini.script(TextReply("The first half of the ans", finish_reason=reason))
    reply = await model.generate(ask("tell me everything"))
    assert reply.finish_reason == reason
    assert "".join(p.text for p in reply.parts if isinstance(p, TextPart)) == (
        "The first half of the ans"
    )


async def test_a_normal_reply_says_stop(model: GeminiChatModel, fake_gemini: FakeGemini) -> None:
    fake_gemini.reply_text("all of it")
    assert (await model.generate(ask("hi"))).finish_reason == "STOP"


async def test_429_waits_the_retry_delay_the_service_asks_for(fake_gemini: FakeGemini) -> None:
    model = make_model(retry_attempts=3, timeout_s=10)
    fake_gemini.fail(429, retry_delay="1.2s")
    fake_gemini.reply_text("after the wait")
    reply = await model.generate(ask("hi"))
    assert reply.parts[0] == TextPart(text="after the wait")
    first, second = fake_gemini.generate_requests()
    # The SDK's own backoff (0.01 s here) would have retried at once.
    assert second.received_at - first.received_at >= 1.2
    await model.aclose()


async def test_429_asking_longer_than_the_timeout_fails_at_once_and_says_so(
    fake_gemini: FakeGemini,
) -> None:
    model = make_model(retry_attempts=4, timeout_s=3)
    fake_gemini.fail(429, retry_delay="15s", times=4)
    with pytest.raises(ModelError) as caught:
        await model.generate(ask("hi"))
    assert caught.value.kind == "quota"
    assert "wait 15 s" in caught.value.message
    assert len(fake_gemini.generate_requests()) == 1
    await model.aclose()


async def test_blocked_prompt_shows_the_block_reason_message(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    fake_gemini.block("PROHIBITED_CONTENT", "The prompt asks for something we cannot help with.")
    with pytest.raises(ModelError) as caught:
        await model.generate(ask("something bad"))
    assert "PROHIBITED_CONTENT" in caught.value.message
    assert "cannot help with" in caught.value.message


async def test_reply_of_only_an_empty_signed_text_part_is_an_error(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_parts({"text": "", "thoughtSignature": b64(new_signature())})
    with pytest.raises(ModelError) as caught:
        await model.generate(ask("hi"))
    assert "empty reply" in caught.value.message

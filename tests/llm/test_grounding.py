"""Gemini's web tools through the real SDK against the fake server: the request shape, the
grounding of the reply (from a response written from the REST docs), and the refusal of the
tool combination by models before Gemini 3."""

from __future__ import annotations

import pytest

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest, ToolSpec
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.llm.mapping import content_to_sdk
from tests.fakes import FakeGemini
from tests.fakes.gemini_grounding import grounded_reply, grounded_response
from tests.fakes.gemini_rules import COMBINATION_REFUSED

READ = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})
QUESTION = MessageEvent(role="user", parts=[TextPart(text="Who won the euro 2024?")])


def request(
    *web_tools: str, model: str = "gemini-3-flash-preview", tools: bool = True
) -> ModelRequest:
    return ModelRequest(
        model=model,
        system_instruction="be brief",
        contents=[QUESTION],
        tools=[READ] if tools else [],
        web_tools=web_tools,
    )


async def test_a_search_grounded_reply_keeps_its_sources(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_with(grounded_reply())
    reply = await model.generate(request("google_search"))
    sent = fake_gemini.generate_requests()[-1].body
    assert {"googleSearch": {}} in sent["tools"]
    assert fake_gemini.generate_requests()[-1].tool_names == ["read_file"]
    assert sent["toolConfig"] == {"includeServerSideToolInvocations": True}
    grounding = reply.grounding
    assert grounding is not None
    recorded = grounded_response()["candidates"][0]["groundingMetadata"]
    assert grounding.search_queries == recorded["webSearchQueries"]
    assert [(s.title, s.uri) for s in grounding.sources] == [
        (c["web"]["title"], c["web"]["uri"]) for c in recorded["groundingChunks"]
    ]
    assert [s.sources for s in grounding.supports] == [[0], [0, 1]]
    assert grounding.supports[0].text.startswith("Spain won Euro 2024")
    assert (
        grounding.supports[1].start_index
        == recorded["groundingSupports"][1]["segment"]["startIndex"]
    )
    assert grounding.search_entry_point == recorded["searchEntryPoint"]["renderedContent"]
    assert grounding.url_context == []  # URL context was not offered
    assert "grounding" not in content_to_sdk(reply).model_dump(exclude_none=True)


async def test_url_context_alone_records_the_pages_read(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_with(grounded_reply())
    reply = await model.generate(request("url_context", tools=False))
    sent = fake_gemini.generate_requests()[-1].body
    assert sent["tools"] == [{"urlContext": {}}]
    assert "toolConfig" not in sent  # nothing combined
    assert reply.grounding is not None
    assert reply.grounding.sources == []
    (page,) = reply.grounding.url_context
    assert page.url == "https://www.uefa.com/euro2024/" and page.ok


async def test_without_web_tools_nothing_is_offered_or_grounded(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_with(grounded_reply())
    reply = await model.generate(request())
    sent = fake_gemini.generate_requests()[-1].body
    assert all("googleSearch" not in t and "urlContext" not in t for t in sent["tools"])
    assert reply.grounding is None
    assert "Spain won Euro 2024" in "".join(p.text for p in reply.parts if isinstance(p, TextPart))


async def test_a_model_before_gemini_3_refuses_the_combination_clearly(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    with pytest.raises(ModelError) as caught:
        await model.generate(request("google_search", "url_context", model="gemini-2.5-flash"))
    message = caught.value.message
    assert caught.value.kind == "bad_request"
    assert "Google Search and URL context together with Koroku's tools" in message
    assert "only on Gemini 3 models" in message and "KOROKU_GOOGLE_SEARCH=0" in message
    assert COMBINATION_REFUSED in message


async def test_web_tools_alone_work_on_any_model(
    model: GeminiChatModel, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_with(grounded_reply())
    reply = await model.generate(request("google_search", model="gemini-2.5-flash", tools=False))
    assert reply.grounding is not None and len(reply.grounding.sources) == 2

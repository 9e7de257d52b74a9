"""The embedder sends through the chat model's SDK client (one client a process), keeping its
own timeout and retries on each request."""

from __future__ import annotations

import pytest

from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.llm.embeddings import GeminiEmbedder
from koroku_desktop.llm.gemini import GeminiChatModel
from tests.fakes.gemini_server import FakeGemini
from tests.llm.conftest import make_model
from tests.support.gemini import TEST_API_KEY


async def test_the_embedder_sends_through_the_chat_models_client(
    fake_gemini: FakeGemini, model: GeminiChatModel
) -> None:
    embedder = GeminiEmbedder(TEST_API_KEY, client=model.sdk_client)
    vectors = await embedder.embed_documents(["a red car", "a blue boat"])
    assert [len(v) for v in vectors] == [768, 768]
    assert len(await embedder.embed_query("a crimson automobile")) == 768
    assert len(fake_gemini.embed_requests()) == 2
    await embedder.aclose()  # the client is the model's: it stays open
    assert len(await embedder.embed_query("still there")) == 768


async def test_its_own_retries_apply_on_the_shared_client(fake_gemini: FakeGemini) -> None:
    chat = make_model(retry_attempts=1)  # the client itself would not retry
    embedder = GeminiEmbedder(TEST_API_KEY, retry_attempts=3, client=chat.sdk_client)
    fake_gemini.embedding_outage = 503
    try:
        with pytest.raises(ModelError):
            await embedder.embed_query("anything")
        assert len(fake_gemini.embed_requests()) == 3
    finally:
        await chat.aclose()

"""Fixtures for the Gemini adapter tests: the fake server and a model with quick retries."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from koroku_desktop.llm.gemini import GeminiChatModel
from tests.fakes.gemini_server import FakeGemini
from tests.support.gemini import TEST_API_KEY

__all__ = ["make_model", "model"]


def make_model(api_key: str = TEST_API_KEY, **kwargs: object) -> GeminiChatModel:
    """A model with tiny retry delays and a short timeout, on the SDK's default endpoint."""
    options: dict[str, object] = {
        "timeout_s": 5.0,
        "retry_attempts": 3,
        "retry_initial_delay_s": 0.01,
        "retry_max_delay_s": 0.05,
    }
    options.update(kwargs)
    return GeminiChatModel(api_key, **options)  # type: ignore[arg-type]


@pytest.fixture
async def model(fake_gemini: FakeGemini) -> AsyncIterator[GeminiChatModel]:
    """A GeminiChatModel talking to the fake through GOOGLE_GEMINI_BASE_URL."""
    chat_model = make_model()
    yield chat_model
    await chat_model.aclose()

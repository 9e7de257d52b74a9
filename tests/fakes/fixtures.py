"""Pytest fixtures for the fake Gemini server; a conftest imports `fake_gemini` from here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.gemini_server import FakeGemini

TEST_API_KEY = "test-key"


@pytest.fixture
def fake_gemini(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    """A running FakeGemini; the SDK reaches it through GOOGLE_GEMINI_BASE_URL and a test key."""
    fake = FakeGemini().start()
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    monkeypatch.setenv("GEMINI_API_KEY", TEST_API_KEY)
    try:
        yield fake
    finally:
        fake.stop()

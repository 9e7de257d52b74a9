"""The fake Gemini server as fixtures: one server per session (per xdist worker), reset to a
fresh state before every test, with the SDK's endpoint and a test key set in the test's env."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.gemini_server import FakeGemini

TEST_API_KEY = "test-key"


@pytest.fixture(scope="session")
def fake_gemini_server() -> Iterator[FakeGemini]:
    """The session's one running FakeGemini (use `fake_gemini`, which resets it per test)."""
    fake = FakeGemini().start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def fake_gemini(
    fake_gemini_server: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeGemini]:
    """A FakeGemini as if just started; the SDK reaches it through GOOGLE_GEMINI_BASE_URL and
    a test key (set for this test only)."""
    fake = fake_gemini_server.reset_all()
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    monkeypatch.setenv("GEMINI_API_KEY", TEST_API_KEY)
    try:
        yield fake
    finally:
        # Cut what this test left open (a delayed reply, a held connection) right away.
        fake.reset_all()


def sent_user_texts(fake: FakeGemini) -> list[str]:
    """The text parts of the last user content of every generate request, Koroku's own
    notes (`[Koroku: ...]`) left out: what the person's messages sent."""
    return [
        p["text"]
        for request in fake.generate_requests()
        for c in request.contents[-1:]
        if c.get("role") == "user"
        for p in c.get("parts", [])
        if "text" in p and not p["text"].startswith("[Koroku:")
    ]

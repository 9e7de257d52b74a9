"""The fake Gemini server's fixtures, kept importable here; they live in tests/support/gemini.py
and reach every test through the tests/support plugin, so no conftest needs to import them."""

from __future__ import annotations

from tests.support.gemini import TEST_API_KEY, fake_gemini, fake_gemini_server

__all__ = ["TEST_API_KEY", "fake_gemini", "fake_gemini_server"]

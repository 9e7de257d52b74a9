"""Event builders shared by the suites: one spelling of "the person said" and "the model said"."""

from __future__ import annotations

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart


def user(text: str) -> MessageEvent:
    """A message the person typed."""
    return MessageEvent(role="user", origin="person", parts=[TextPart(text=text)])


def model(text: str) -> MessageEvent:
    """A text answer of the model."""
    return MessageEvent(role="model", origin="model", parts=[TextPart(text=text)])


def said(text: str, role: str = "user") -> MessageEvent:
    """`user(text)` or `model(text)` by role (the role as a string, as tables of cases hold)."""
    return user(text) if role == "user" else model(text)

"""Test doubles faked at the wire: a real local HTTP server speaking Gemini's REST API."""

from tests.fakes.gemini_replies import (
    CallsReply,
    DropReply,
    EchoReply,
    ErrorReply,
    PartsReply,
    ReceivedRequest,
    TextReply,
)
from tests.fakes.gemini_server import BAD_KEY, FakeGemini

__all__ = [
    "BAD_KEY",
    "CallsReply",
    "DropReply",
    "EchoReply",
    "ErrorReply",
    "FakeGemini",
    "PartsReply",
    "ReceivedRequest",
    "TextReply",
]

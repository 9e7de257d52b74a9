"""A grounded Gemini reply for the fake server: the response in `recorded/grounded_euro2024.json`
answered to a request that offers the `googleSearch` tool.

No real recorded response with grounding existed in this repository, so that file was WRITTEN
from the official REST documentation's example (ai.google.dev/gemini-api/docs/google-search:
"Who won the euro 2024?", chunks titled by domain with vertexaisearch redirect links, supports
mapping sentences to chunk indices, the Search Suggestions HTML) and its `urlContextMetadata`
from the URL context page. Two deliberate details: an en dash makes Gemini's UTF-8 byte
offsets differ from character offsets, as they do in real replies with non-ASCII text; the
text part gets a fresh thought signature, as Gemini 3 signs the last part of a reply.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from tests.fakes.gemini_replies import (
    JsonDict,
    PartsReply,
    ReceivedRequest,
    ReplyFn,
    b64,
    new_signature,
)

RECORDED = Path(__file__).parent / "recorded" / "grounded_euro2024.json"


def grounded_response() -> JsonDict:
    """The grounded response body (a fresh copy)."""
    body: JsonDict = json.loads(RECORDED.read_text(encoding="utf-8"))
    return body


def offered(request: ReceivedRequest, tool: str) -> bool:
    """Whether the request offers a built-in tool (`googleSearch`, `urlContext`)."""
    return any(tool in t for t in request.body.get("tools") or [])


def grounded_reply(body: JsonDict | None = None) -> ReplyFn:
    """Answer with the grounded response when Google Search is offered; without the tool the
    model cannot search, so the same text comes back with no grounding, as the service would."""
    recorded = body if body is not None else grounded_response()

    def reply(request: ReceivedRequest) -> PartsReply:
        candidate = copy.deepcopy(recorded["candidates"][0])
        parts = candidate.pop("content")["parts"]
        parts[-1]["thoughtSignature"] = b64(new_signature())
        extra: JsonDict = {}
        if offered(request, "googleSearch") and "groundingMetadata" in candidate:
            extra["groundingMetadata"] = candidate["groundingMetadata"]
        if offered(request, "urlContext") and "urlContextMetadata" in candidate:
            extra["urlContextMetadata"] = candidate["urlContextMetadata"]
        return PartsReply(tuple(parts), candidate=extra)

    return reply

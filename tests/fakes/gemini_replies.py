"""Scripted replies of the fake Gemini server, and the JSON they become on the wire.

A reply is a small frozen value (`TextReply`, `CallsReply`, ...) or a callable that picks one
from the received request. Rendering turns it into Gemini REST parts the way Gemini 3 sends
them: random thought signatures as standard base64, on the first function call of a step or
on the last part of a text reply (an empty text part at the end of a stream).
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

JsonDict = dict[str, Any]

_PATH_RE = re.compile(r"/models/(?P<model>[^/:?]+):(?P<method>[A-Za-z]+)")


TIME_NOTE_PREFIX = "[Koroku: this message was sent on "
"""How Koroku's time note part begins (koroku_desktop.domain.turn_time)."""
KOROKU_NOTE_PREFIX = "[Koroku: "
"""How the parts Koroku adds to a person's turn begin (the time note, remembered passages)."""


def said_text(parts: list[JsonDict]) -> str:
    """The text of a content's parts as the person wrote it: Koroku's own notes left out."""
    texts = (str(p.get("text", "")) for p in parts)
    return "".join(t for t in texts if not t.startswith(KOROKU_NOTE_PREFIX))


class ReceivedRequest(NamedTuple):
    """One request as the fake received it: the URL path (with query) and the JSON body."""

    path: str
    body: JsonDict
    received_at: float = 0.0
    """`time.monotonic()` when the request arrived."""

    @property
    def method(self) -> str:
        """`generateContent`, `streamGenerateContent` or `countTokens`."""
        match = _PATH_RE.search(self.path)
        return match.group("method") if match else ""

    @property
    def model(self) -> str:
        """The model name from the path."""
        match = _PATH_RE.search(self.path)
        return match.group("model") if match else ""

    @property
    def contents(self) -> list[JsonDict]:
        """The request's contents (for countTokens too)."""
        contents: list[JsonDict] = self.body.get("contents") or []
        return contents

    @property
    def system_text(self) -> str:
        """The text of the system instruction, or ''."""
        system = self.body.get("systemInstruction") or {}
        return "".join(str(p.get("text", "")) for p in system.get("parts", []))

    @property
    def tool_names(self) -> list[str]:
        """The names of the declared functions, in order."""
        return [
            str(decl.get("name"))
            for tool in self.body.get("tools") or []
            for decl in tool.get("functionDeclarations") or []
        ]

    @property
    def has_tools(self) -> bool:
        """Whether any tool was offered."""
        return bool(self.body.get("tools"))

    def last_text(self) -> str:
        """The text of the last content (what the user just said, usually).

        Koroku's time note (a part of its own at the start of a user turn) is left out.
        """
        if not self.contents:
            return ""
        return said_text(self.contents[-1].get("parts", []))


@dataclass(frozen=True)
class TextReply:
    """A text answer, optionally preceded by a thought part; streamed in `chunks` pieces."""

    text: str
    thought: str | None = None
    chunks: int = 3
    finish_reason: str = "STOP"
    """`MAX_TOKENS`, `SAFETY`, `RECITATION`: the answer is cut off after its text."""


@dataclass(frozen=True)
class CallsReply:
    """One step of function calls (parallel when several); the first carries the signature."""

    calls: tuple[tuple[str, JsonDict], ...]
    thought: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class PartsReply:
    """Parts sent verbatim as one model content (service JSON casing), no signature added;
    `candidate` adds fields to the final candidate (`groundingMetadata`, ...)."""

    parts: tuple[JsonDict, ...]
    candidate: JsonDict = field(default_factory=dict)


@dataclass(frozen=True)
class EchoReply:
    """Send back the parts of `contents[index]` of the request, in the service's casing."""

    index: int = -1


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with Gemini's error JSON."""

    status: int
    message: str | None = None
    details: tuple[JsonDict, ...] = ()


@dataclass(frozen=True)
class BlockedReply:
    """The prompt is blocked: no candidate, a `promptFeedback` with the reason and message."""

    reason: str = "PROHIBITED_CONTENT"
    message: str | None = None


@dataclass(frozen=True)
class DropReply:
    """Close the connection: before any response, or after the first stream event."""

    mid_stream: bool = False


@dataclass(frozen=True)
class DelayStep:
    """Wait before answering the next scripted step."""

    seconds: float


ContentReply = TextReply | CallsReply | PartsReply | EchoReply | BlockedReply
Reply = ContentReply | ErrorReply | DropReply
ReplyFn = Callable[[ReceivedRequest], Reply]
Step = Reply | DelayStep | ReplyFn

STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
DEFAULT_MESSAGES = {
    400: "Request contains an invalid argument.",
    429: "Resource has been exhausted (e.g. check quota).",
    500: "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting",
    503: "The model is overloaded. Please try again later.",
}


def retry_info(delay: str) -> JsonDict:
    """The `RetryInfo` detail a real 429 carries (`delay` like `"15s"`)."""
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


def blocked_body(reply: BlockedReply, request: ReceivedRequest) -> JsonDict:
    """A response whose prompt was blocked: no candidates, the reason in `promptFeedback`."""
    feedback: JsonDict = {"blockReason": reply.reason}
    if reply.message:
        feedback["blockReasonMessage"] = reply.message
    prompt = prompt_tokens(request.body)
    return {
        "promptFeedback": feedback,
        "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt},
        "modelVersion": request.model,
    }


def error_body(
    status: int, message: str | None = None, details: list[JsonDict] | None = None
) -> JsonDict:
    """Gemini's error JSON: `{"error": {"code", "message", "status"}}`."""
    error: JsonDict = {
        "code": status,
        "message": message or DEFAULT_MESSAGES.get(status, "Error."),
        "status": STATUS_NAMES.get(status, "UNKNOWN"),
    }
    if details:
        error["details"] = details
    return {"error": error}


def new_signature() -> bytes:
    """Random opaque signature bytes, of a length like the real ones."""
    return os.urandom(48 + secrets.randbelow(120))


def b64(raw: bytes) -> str:
    """Standard base64, as the service sends bytes fields."""
    return base64.b64encode(raw).decode("ascii")


def decode_b64(text: str) -> bytes:
    """Bytes from standard or URL-safe base64 (the SDK sends URL-safe)."""
    return base64.urlsafe_b64decode(
        text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4)
    )


IMAGE_TILE_TOKENS = 258
"""What Gemini counts per 768×768 tile of an image (258 for one up to 384×384)."""


def media_tokens(blob: JsonDict) -> int:
    """What the service counts for one `inlineData` blob: an image by its tiles (a PNG's size
    read from its header), anything else 258; never its base64 characters."""
    data = str(blob.get("data", ""))
    # The SDK sends bytes in the URL-safe alphabet: '-' and '_' would be dropped by the
    # default decoder (a random blob then fails on its padding and the request is lost).
    head = base64.b64decode(data[:32], altchars=b"-_") if len(data) >= 32 else b""
    if head.startswith(b"\x89PNG") and len(head) >= 24:
        width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
        if width <= 384 and height <= 384:
            return IMAGE_TILE_TOKENS
        longest = max(width, height)
        if longest > 3072:  # the service scales a larger image down to fit 3072 first
            width, height = max(1, width * 3072 // longest), max(1, height * 3072 // longest)
        return IMAGE_TILE_TOKENS * -(-width // 768) * -(-height // 768)
    return IMAGE_TILE_TOKENS


def _split_media(payload: Any) -> tuple[Any, int]:
    """`payload` without its inline blobs' bytes, and the tokens those blobs count."""
    if isinstance(payload, dict):
        tokens = 0
        kept: JsonDict = {}
        for key, value in payload.items():
            if key in ("inlineData", "inline_data") and isinstance(value, dict):
                tokens += media_tokens(value)
                kept[key] = {k: v for k, v in value.items() if k != "data"}
            else:
                kept[key], more = _split_media(value)
                tokens += more
        return kept, tokens
    if isinstance(payload, list):
        pieces = [_split_media(v) for v in payload]
        return [p for p, _ in pieces], sum(t for _, t in pieces)
    return payload, 0


def estimate_tokens(payload: Any) -> int:
    """A rough token count: JSON characters / 4 with media counted as the service counts
    them (see `media_tokens`), at least 1."""
    text, media = _split_media(payload)
    return max(1, len(json.dumps(text, ensure_ascii=False)) // 4 + media)


def cache_pieces(body: JsonDict) -> list[str]:
    """A request's prompt as the implicit cache sees it: the preamble, then each content."""
    preamble = json.dumps([body.get("systemInstruction"), body.get("tools")], sort_keys=True)
    contents = body.get("contents") or []
    return [preamble, *(json.dumps(c, sort_keys=True) for c in contents)]


def cached_prefix_tokens(previous: list[str], current: list[str]) -> int:
    """Tokens of the leading pieces `current` shares byte for byte with `previous` (0: none).

    Like Gemini's implicit cache: a changed preamble (system instruction, tools) misses all.
    """
    shared = 0
    for old, new in zip(previous, current, strict=False):
        if old != new:
            break
        shared += 1
    return sum(len(p) for p in current[:shared]) // 4


def prompt_tokens(body: JsonDict) -> int:
    """The prompt size of a request, counted the same way for every method."""
    return estimate_tokens([body.get(k) for k in ("contents", "systemInstruction", "tools")])


@dataclass
class Rendered:
    """A reply as stream events (each a list of parts), plus what it signed."""

    events: list[list[JsonDict]]
    signed_calls: dict[str, bytes | None] = field(default_factory=dict)
    thought_chars: int = 0
    finish_reason: str = "STOP"
    candidate: JsonDict = field(default_factory=dict)


def _split(text: str, pieces: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _call_part(name: str, args: JsonDict) -> JsonDict:
    return {"functionCall": {"id": f"call_{secrets.token_hex(6)}", "name": name, "args": args}}


def _thought_part(text: str) -> JsonDict:
    return {"text": text, "thought": True}


def render(reply: ContentReply, request: ReceivedRequest, stream: bool) -> Rendered:
    """Turn a content reply into parts, grouped into stream events (one event if not stream)."""
    if isinstance(reply, TextReply):
        sig = b64(new_signature())
        head = [_thought_part(reply.thought)] if reply.thought else []
        tc = len(reply.thought or "")
        reason = reply.finish_reason
        if not stream:
            return Rendered(
                [[*head, {"text": reply.text, "thoughtSignature": sig}]], {}, tc, reason
            )
        events = [[p] for p in head] + [[{"text": t}] for t in _split(reply.text, reply.chunks)]
        events.append([{"text": "", "thoughtSignature": sig}])
        return Rendered(events, {}, tc, reason)
    if isinstance(reply, CallsReply):
        calls = [_call_part(name, dict(args)) for name, args in reply.calls]
        signed: dict[str, bytes | None] = {}
        for i, part in enumerate(calls):
            sig_bytes = new_signature() if i == 0 else None
            if sig_bytes is not None:
                part["thoughtSignature"] = b64(sig_bytes)
            signed[part["functionCall"]["id"]] = sig_bytes
        head = [_thought_part(reply.thought)] if reply.thought else []
        if reply.text:
            head.append({"text": reply.text})
        events = [[p] for p in head] + [calls] if stream else [[*head, *calls]]
        return Rendered(events, signed, len(reply.thought or ""))
    if isinstance(reply, BlockedReply):
        return Rendered([[]])
    if isinstance(reply, EchoReply):
        contents = request.contents
        parts = contents[reply.index].get("parts", []) if contents else []
        reply = PartsReply(tuple(to_service_casing(p) for p in parts))
    parts = [dict(p) for p in reply.parts]
    signed = {}
    for part in parts:
        call = part.get("functionCall")
        if isinstance(call, dict) and call.get("id"):
            sig = part.get("thoughtSignature")
            signed[str(call["id"])] = decode_b64(sig) if sig else None
    return Rendered([parts], signed, 0, candidate=dict(reply.candidate))


_VERBATIM_KEYS = {"args", "response", "partMetadata", "part_metadata"}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def to_service_casing(value: Any, key: str = "") -> Any:
    """A part as the SDK sent it (snake_case inside, URL-safe base64) -> as the service sends it."""
    if isinstance(value, dict):
        if key in _VERBATIM_KEYS:
            return value
        out: JsonDict = {}
        for k, v in value.items():
            ck = _camel(k)
            if ck in ("thoughtSignature", "data") and isinstance(v, str):
                out[ck] = b64(decode_b64(v))
            else:
                out[ck] = to_service_casing(v, ck)
        return out
    if isinstance(value, list):
        return [to_service_casing(v, key) for v in value]
    return value


def response_body(
    parts: list[JsonDict],
    request: ReceivedRequest,
    *,
    output_chars: int,
    thought_chars: int,
    final: bool,
    response_id: str,
    cached_tokens: int = 0,
    finish_reason: str = "STOP",
    candidate_extra: JsonDict | None = None,
) -> JsonDict:
    """One GenerateContentResponse (a whole reply, or one stream event) with usage metadata."""
    candidate: JsonDict = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if final:
        candidate["finishReason"] = finish_reason
        candidate.update(candidate_extra or {})
    prompt = prompt_tokens(request.body)
    output = max(1, output_chars // 4)
    thoughts = thought_chars // 4
    usage: JsonDict = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output + thoughts,
    }
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    if cached_tokens:
        usage["cachedContentTokenCount"] = min(cached_tokens, prompt)
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": request.model,
        "responseId": response_id,
    }

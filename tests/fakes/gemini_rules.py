"""The history rules the real Gemini service enforces, checked by the fake on every request.

`check_contents` returns the 400 message the service would answer with, or None when the
request is acceptable.
"""

from __future__ import annotations

import binascii

from tests.fakes.gemini_replies import JsonDict, ReceivedRequest, decode_b64

SIGNATURE_DOCS = "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures."


def _calls(content: JsonDict) -> list[JsonDict]:
    return [p for p in content.get("parts", []) if isinstance(p.get("functionCall"), dict)]


def _responses(content: JsonDict) -> list[JsonDict]:
    return [p["functionResponse"] for p in content.get("parts", []) if "functionResponse" in p]


def _check_shape(contents: list[JsonDict]) -> str | None:
    if not contents:
        return "* GenerateContentRequest.contents: contents is not specified"
    for i, content in enumerate(contents):
        role = content.get("role", "user")
        if role not in ("user", "model"):
            return f"Please use a valid role: user, model. (contents[{i}].role is {role!r})"
        if not content.get("parts"):
            return (
                f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
            )
        problem = _check_text_parts(i, content["parts"])
        if problem:
            return problem
    return None


def _is_empty_text(part: JsonDict) -> bool:
    return "text" in part and not part["text"] and len(set(part) - _TEXT_EXTRAS) == 1


_TEXT_EXTRAS = {"thought", "thoughtSignature", "thought_signature"}
EMPTY_TEXT = "Unable to submit request because it has an empty text parameter."


def _check_text_parts(i: int, parts: list[JsonDict]) -> str | None:
    """An empty text part is refused unless it only carries a signature beside real parts."""
    for k, part in enumerate(parts):
        signed = part.get("thoughtSignature") or part.get("thought_signature")
        if _is_empty_text(part) and not signed:
            return f"{EMPTY_TEXT} Add a value to contents[{i}].parts[{k}].text and try again."
    if all(_is_empty_text(p) for p in parts):
        return f"{EMPTY_TEXT} contents[{i}] has only empty text parts."
    return None


def _check_signatures(contents: list[JsonDict], issued: dict[str, bytes | None]) -> str | None:
    for i, content in enumerate(contents):
        for part in _calls(content):
            call = part["functionCall"]
            call_id = call.get("id")
            if call_id not in issued:
                continue
            expected = issued[call_id]
            sent = part.get("thoughtSignature") or part.get("thought_signature")
            if expected is None:
                continue
            if sent is None:
                return (
                    "Function call is missing a thought_signature in functionCall parts. "
                    f"Additional data, function call `{call.get('name')}`, position {i}. "
                    + SIGNATURE_DOCS
                )
            try:
                sent_bytes = decode_b64(str(sent))
            except (binascii.Error, ValueError):
                sent_bytes = b""
            if sent_bytes != expected:
                return (
                    "Unable to verify the thought_signature of function call "
                    f"`{call.get('name')}` at position {i}: it is not the one that was issued. "
                    + SIGNATURE_DOCS
                )
    return None


def _check_pair(i: int, calls: list[JsonDict], responses: list[JsonDict]) -> str | None:
    if len(calls) != len(responses):
        return (
            "Please ensure that the number of function response parts is equal to the number "
            f"of function call parts of the function call turn (contents[{i}] has "
            f"{len(calls)} calls, contents[{i + 1}] has {len(responses)} responses)."
        )
    for k, (part, response) in enumerate(zip(calls, responses, strict=True)):
        call = part["functionCall"]
        if response.get("name") != call.get("name"):
            return (
                f"Function response name {response.get('name')!r} does not match function call "
                f"name {call.get('name')!r} (contents[{i + 1}], response {k})."
            )
        if call.get("id") and response.get("id") != call.get("id"):
            return (
                f"Function response id {response.get('id')!r} does not match function call id "
                f"{call.get('id')!r} (contents[{i + 1}], response {k})."
            )
    return None


def _check_pairing(contents: list[JsonDict]) -> str | None:
    for i, content in enumerate(contents):
        calls = _calls(content)
        responses = _responses(content)
        if calls and content.get("role") != "model":
            return f"Function calls must be in a model content (contents[{i}] is a user content)."
        if responses:
            previous = contents[i - 1] if i > 0 else None
            if previous is None or previous.get("role") != "model" or not _calls(previous):
                return (
                    "Please ensure that function response turn comes immediately after a "
                    f"function call turn (contents[{i}])."
                )
        if not calls:
            continue
        following = contents[i + 1] if i + 1 < len(contents) else None
        if following is None or not _responses(following):
            return (
                "Please ensure that function call turn comes immediately before a function "
                f"response turn (contents[{i}] has calls that are not answered)."
            )
        problem = _check_pair(i, calls, _responses(following))
        if problem:
            return problem
    return None


def check_contents(body: JsonDict, issued: dict[str, bytes | None]) -> str | None:
    """The service's 400 message for this request body, or None if it is acceptable."""
    contents: list[JsonDict] = body.get("contents") or []
    return _check_shape(contents) or _check_signatures(contents, issued) or _check_pairing(contents)


def check_size(tokens: int, limit: int | None) -> str | None:
    """The service's 400 message for a prompt over the model's input limit, or None."""
    if limit is None or tokens <= limit:
        return None
    return (
        f"The input token count ({tokens}) exceeds the maximum number of tokens allowed ({limit})."
    )


_TOOL_FIELDS = {
    "functionDeclarations",
    "googleSearch",
    "googleSearchRetrieval",
    "urlContext",
    "codeExecution",
    "googleMaps",
    "fileSearch",
    "computerUse",
    "retrieval",
}
_WEB_TOOLS = {"googleSearch", "urlContext"}
COMBINATION_REFUSED = "Tool use with function calling is unsupported"
"""What a model before Gemini 3 answers (400) to built-in tools beside function declarations."""


def check_tools(request: ReceivedRequest) -> str | None:
    """The service's rules for `tools`: known tool fields, built-in tools as objects, the
    legacy `googleSearchRetrieval` refused by Gemini 3, and built-in web tools combined with
    function declarations only on Gemini 3 models (a preview of the tool-combination API)."""
    kinds: set[str] = set()
    for i, tool in enumerate(request.body.get("tools") or []):
        if not isinstance(tool, dict) or not tool:
            return f"* GenerateContentRequest.tools[{i}]: tool must not be empty"
        for key, value in tool.items():
            if key not in _TOOL_FIELDS:
                return (
                    f'Invalid JSON payload received. Unknown name "{key}" at '
                    f"'tools[{i}]': Cannot find field."
                )
            if key in _WEB_TOOLS and not isinstance(value, dict):
                return f"Invalid value at 'tools[{i}].{key}': expected an object"
            kinds.add(key)
    gemini_3 = request.model.startswith("gemini-3")
    if "googleSearchRetrieval" in kinds and gemini_3:
        return "google_search_retrieval is not supported. Please use google_search tool instead."
    if kinds & _WEB_TOOLS and "functionDeclarations" in kinds and not gemini_3:
        return COMBINATION_REFUSED
    return None

"""Lossless mapping between our domain parts and the SDK's `types.Part` / `types.Content`.

A part is mapped to its own kind only when every field it carries is one we model; anything
else (a new part kind, an extra field on a known kind) becomes an `UnknownPart` holding the
SDK's JSON verbatim, so that it is stored and sent back unchanged. Thought signatures are the
SDK's bytes, stored as standard base64 of exactly those bytes.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from enum import Enum
from typing import Any

from google.genai import types

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ToolSpec
from koroku_desktop.domain.parts import (
    AttachmentPart,
    CodeExecutionResultPart,
    ExecutableCodePart,
    FileDataPart,
    FunctionCallPart,
    FunctionResponsePart,
    InlineDataPart,
    Part,
    TextPart,
    UnknownPart,
    encode_signature,
)

# For each part field we model: the sub-fields we keep. A part using anything else is unknown.
_KNOWN: dict[str, frozenset[str]] = {
    "function_call": frozenset({"id", "name", "args"}),
    "function_response": frozenset({"id", "name", "response", "parts"}),
    "inline_data": frozenset({"mime_type", "data"}),
    "file_data": frozenset({"mime_type", "file_uri"}),
    "executable_code": frozenset({"language", "code"}),
    "code_execution_result": frozenset({"outcome", "output"}),
}


def _set_fields(model: Any) -> set[str]:
    """The fields of an SDK model that are not None."""
    return {name for name in type(model).model_fields if getattr(model, name) is not None}


def _enum_text(value: Any) -> str | None:
    if value is None:
        return None
    return str(value.value) if isinstance(value, Enum) else str(value)


def _known_kind(part: types.Part) -> str | None:
    """The single modelled kind of `part`, or None if it must be kept as unknown."""
    fields = _set_fields(part) - {"thought_signature"}
    if "text" in fields:
        return "text" if fields <= {"text", "thought"} else None
    if "thought" in fields or len(fields) != 1:
        return None
    (kind,) = fields
    allowed = _KNOWN.get(kind)
    if allowed is None or not _set_fields(getattr(part, kind)) <= allowed:
        return None
    return kind


def _media_from_sdk(parts: list[types.FunctionResponsePart] | None) -> list[InlineDataPart] | None:
    """A function response's media parts, or None if one holds more than mime type and data."""
    media: list[InlineDataPart] = []
    for item in parts or []:
        blob = item.inline_data
        if _set_fields(item) != {"inline_data"} or blob is None:
            return None
        if not _set_fields(blob) <= {"mime_type", "data"}:
            return None
        data = base64.b64encode(blob.data or b"").decode("ascii")
        media.append(InlineDataPart(mime_type=blob.mime_type, data=data))
    return media


def part_from_sdk(part: types.Part) -> Part:
    """One SDK part -> our domain part, losing nothing."""
    sig = encode_signature(part.thought_signature)
    kind = _known_kind(part)
    if kind == "text":
        return TextPart(text=part.text or "", thought=bool(part.thought), thought_signature=sig)
    if kind == "function_call" and part.function_call is not None:
        fc = part.function_call
        return FunctionCallPart(
            name=fc.name or "", args=dict(fc.args or {}), id=fc.id, thought_signature=sig
        )
    if kind == "function_response" and part.function_response is not None:
        fr = part.function_response
        media = _media_from_sdk(fr.parts)
        if media is not None:
            return FunctionResponsePart(
                name=fr.name or "",
                response=dict(fr.response or {}),
                id=fr.id,
                parts=media or None,
                thought_signature=sig,
            )
    if kind == "inline_data" and part.inline_data is not None:
        blob = part.inline_data
        data = base64.b64encode(blob.data or b"").decode("ascii")
        return InlineDataPart(mime_type=blob.mime_type, data=data, thought_signature=sig)
    if kind == "file_data" and part.file_data is not None:
        fd = part.file_data
        return FileDataPart(
            mime_type=fd.mime_type, file_uri=fd.file_uri or "", thought_signature=sig
        )
    if kind == "executable_code" and part.executable_code is not None:
        ec = part.executable_code
        return ExecutableCodePart(
            language=_enum_text(ec.language), code=ec.code or "", thought_signature=sig
        )
    if kind == "code_execution_result" and part.code_execution_result is not None:
        cr = part.code_execution_result
        return CodeExecutionResultPart(
            outcome=_enum_text(cr.outcome), output=cr.output, thought_signature=sig
        )
    raw = part.model_dump(mode="json", exclude_none=True)
    raw.pop("thought_signature", None)
    return UnknownPart(raw=raw, thought_signature=sig)


AttachmentMapper = Callable[[AttachmentPart], types.Part]
"""How an attachment is sent: inline bytes or an uploaded file (see llm/attachments.py)."""


def _no_attachments(part: AttachmentPart) -> types.Part:
    raise ValueError(f"attachment {part.name!r} was not resolved before mapping")


def part_to_sdk(part: Part, attachment: AttachmentMapper = _no_attachments) -> types.Part:
    """One domain part -> the SDK part to send (a response's `call_args` is never sent).

    An attachment becomes whatever `attachment` makes of it (its bytes live in the blob store).
    """
    sig = part.signature_bytes()
    if isinstance(part, AttachmentPart):
        return attachment(part)
    if isinstance(part, TextPart):
        return types.Part(text=part.text, thought=part.thought or None, thought_signature=sig)
    if isinstance(part, FunctionCallPart):
        call = types.FunctionCall(id=part.id, name=part.name, args=part.args)
        return types.Part(function_call=call, thought_signature=sig)
    if isinstance(part, FunctionResponsePart):
        media = [
            types.FunctionResponsePart(
                inline_data=types.FunctionResponseBlob(
                    mime_type=m.mime_type, data=base64.b64decode(m.data)
                )
            )
            for m in part.parts or []
        ]
        response = types.FunctionResponse(
            id=part.id, name=part.name, response=part.response, parts=media or None
        )
        return types.Part(function_response=response, thought_signature=sig)
    if isinstance(part, InlineDataPart):
        blob = types.Blob(mime_type=part.mime_type, data=base64.b64decode(part.data))
        return types.Part(inline_data=blob, thought_signature=sig)
    if isinstance(part, FileDataPart):
        file_data = types.FileData(mime_type=part.mime_type, file_uri=part.file_uri)
        return types.Part(file_data=file_data, thought_signature=sig)
    if isinstance(part, ExecutableCodePart):
        code = types.ExecutableCode.model_validate({"language": part.language, "code": part.code})
        return types.Part(executable_code=code, thought_signature=sig)
    if isinstance(part, CodeExecutionResultPart):
        result = types.CodeExecutionResult.model_validate(
            {"outcome": part.outcome, "output": part.output}
        )
        return types.Part(code_execution_result=result, thought_signature=sig)
    sdk_part = types.Part.model_validate(part.raw)
    if sig is not None:
        sdk_part.thought_signature = sig
    return sdk_part


def content_to_sdk(
    message: MessageEvent, attachment: AttachmentMapper = _no_attachments
) -> types.Content:
    """A message event -> one SDK content with the same role and parts, in order."""
    return types.Content(
        role=message.role, parts=[part_to_sdk(p, attachment) for p in message.parts]
    )


def tools_to_sdk(tools: list[ToolSpec]) -> list[types.Tool] | None:
    """Our tool specs -> one SDK tool of function declarations (None when no tool is offered)."""
    if not tools:
        return None
    declarations = [
        types.FunctionDeclaration(
            name=t.name, description=t.description, parameters_json_schema=t.parameters
        )
        for t in tools
    ]
    return [types.Tool(function_declarations=declarations)]

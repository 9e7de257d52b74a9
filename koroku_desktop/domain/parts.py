"""Message parts: our own lossless mirror of every part kind Gemini can return.

Every part may carry a thought signature, kept as standard base64 of the exact bytes the
service sent, so that it can be returned byte-for-byte on the next request.
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from koroku_desktop.domain.frozen import Frozen

EMBED_RESULT_CHARS = 1_500
"""A tool result's JSON is embedded up to this many characters (a 200 kB file read says
little more than its first page)."""


def compact_json(value: Any) -> str:
    """`value` as one-line JSON, non-ASCII kept, anything odd as its str()."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


class _PartBase(Frozen):
    model_config = ConfigDict(extra="forbid")

    thought_signature: str | None = None
    """Standard base64 of the signature bytes, or None when the part carried none."""

    def search_text(self) -> str:
        """What the full-text index takes of this part ('' for none: binary data)."""
        return ""

    def embed_text(self) -> str:
        """What of this part is worth finding by meaning ('' for none)."""
        return ""

    def is_empty(self) -> bool:
        """Whether the part carries nothing to show (an empty text part)."""
        return False

    def signature_bytes(self) -> bytes | None:
        """The exact signature bytes, decoded."""
        if self.thought_signature is None:
            return None
        return base64.b64decode(self.thought_signature)


class TextPart(_PartBase):
    """Plain text; `thought=True` marks the model's visible reasoning summary."""

    kind: Literal["text"] = "text"
    text: str
    thought: bool = False

    def search_text(self) -> str:
        """The text, thoughts included."""
        return self.text

    def embed_text(self) -> str:
        """The text, not the model's thoughts."""
        return "" if self.thought else self.text

    def is_empty(self) -> bool:
        """No text at all (streaming ends on one, carrying the signature)."""
        return not self.text


class FunctionCallPart(_PartBase):
    """A tool call requested by the model."""

    kind: Literal["function_call"] = "function_call"
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None

    def search_text(self) -> str:
        """The tool's name and the arguments as JSON."""
        return f"{self.name} {compact_json(self.args)}"


class FunctionResponsePart(_PartBase):
    """A tool's result sent back to the model.

    `call_args` keeps the arguments of the call it answers, for rendering only; it is never
    sent to the model. `parts` are media the tool returned (an MCP tool's images), sent
    inside the function response so that the model sees them.
    """

    kind: Literal["function_response"] = "function_response"
    name: str
    response: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    call_args: dict[str, Any] | None = None
    parts: list[InlineDataPart] | None = None

    @property
    def failed(self) -> bool:
        """The tool reported an error, timed out, or its command exited non-zero."""
        resp = self.response
        return (
            "error" in resp
            or bool(resp.get("timed_out"))
            or resp.get("exit_code", 0) not in (0, None)
        )

    def search_text(self) -> str:
        """The tool's name, the word `failed` when it failed, the response as JSON."""
        return f"{self.name} {'failed ' if self.failed else ''}{compact_json(self.response)}"

    def embed_text(self) -> str:
        """The tool's name and the start of its response (`EMBED_RESULT_CHARS`)."""
        return f"{self.name}: {compact_json(self.response)[:EMBED_RESULT_CHARS]}"


class _MimeTypedPart(_PartBase):
    """Data with a mime type; `kind` is declared here so the stored JSON keeps its key order."""

    kind: str
    mime_type: str | None = None


class InlineDataPart(_MimeTypedPart):
    """Inline bytes (an image, audio...), kept as standard base64."""

    kind: Literal["inline_data"] = "inline_data"
    data: str = ""


class FileDataPart(_MimeTypedPart):
    """A reference to an uploaded file."""

    kind: Literal["file_data"] = "file_data"
    file_uri: str = ""


class ExecutableCodePart(_PartBase):
    """Code the model generated for its code-execution tool."""

    kind: Literal["executable_code"] = "executable_code"
    language: str | None = None
    code: str = ""

    def search_text(self) -> str:
        """The code."""
        return self.code


class CodeExecutionResultPart(_PartBase):
    """The result of the model's own code execution."""

    kind: Literal["code_execution_result"] = "code_execution_result"
    outcome: str | None = None
    output: str | None = None

    def search_text(self) -> str:
        """What the code printed."""
        return self.output or ""


class AttachmentPart(_PartBase):
    """A file the person attached: a reference to Koroku's own copy in the blob store.

    Only the SHA-256 of the bytes is stored in the event (the bytes live in
    `<data dir>/blobs/`), so the log stays small and every later request sends exactly the
    same bytes. The Gemini adapter turns it into inline data or an uploaded file when sent.
    """

    kind: Literal["attachment"] = "attachment"
    sha256: str
    mime_type: str
    name: str = ""
    size: int = 0
    server: str | None = None
    """For an MCP resource attached from the composer: the server it was read from."""
    uri: str | None = None
    """For an MCP resource: its URI (the bytes are what the server returned then)."""

    def search_text(self) -> str:
        """Its name: an attached file is found by it."""
        return self.name


class UnknownPart(_PartBase):
    """A part kind this version does not know: the SDK's JSON kept verbatim and sent back."""

    kind: Literal["unknown"] = "unknown"
    raw: dict[str, Any] = Field(default_factory=dict)


Part = Annotated[
    TextPart
    | FunctionCallPart
    | FunctionResponsePart
    | InlineDataPart
    | FileDataPart
    | ExecutableCodePart
    | CodeExecutionResultPart
    | AttachmentPart
    | UnknownPart,
    Field(discriminator="kind"),
]

_DEFERRED = ConfigDict(defer_build=True)
"""Schemas built on first use, not at import (a process that never validates skips it)."""
PART_ADAPTER: TypeAdapter[Part] = TypeAdapter(Part, config=_DEFERRED)
PARTS_ADAPTER: TypeAdapter[list[Part]] = TypeAdapter(list[Part], config=_DEFERRED)


def encode_signature(raw: bytes | None) -> str | None:
    """Bytes from the SDK -> the standard base64 we store."""
    return None if raw is None else base64.b64encode(raw).decode("ascii")


def visible_text(parts: list[Part]) -> str:
    """The non-thought text of a list of parts, joined."""
    return "".join(p.text for p in parts if isinstance(p, TextPart) and not p.thought)

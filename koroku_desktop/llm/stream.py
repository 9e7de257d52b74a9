"""What a streamed Gemini reply adds up to: its parts joined as they arrive (signed parts
never merged), the visible text they add, and what the stream said besides (usage, model
version, why it stopped or was blocked, grounding) for the one aggregated model content."""

from __future__ import annotations

from google.genai import types

from koroku_desktop.domain.events import Usage
from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.domain.parts import Part, TextPart
from koroku_desktop.llm.mapping import part_from_sdk


def append_part(parts: list[Part], part: Part) -> None:
    """Add a streamed part, joining consecutive unsigned text pieces of the same kind.

    A signed part is never merged into another, nor is anything merged into it.
    """
    if isinstance(part, TextPart) and part.thought_signature is None and parts:
        last = parts[-1]
        if (
            isinstance(last, TextPart)
            and last.thought_signature is None
            and last.thought == part.thought
        ):
            parts[-1] = last.model_copy(update={"text": last.text + part.text})
            return
    parts.append(part)


def visible_text(part: Part) -> str:
    """The visible text a streamed part adds ('' for thoughts and non-text parts)."""
    return part.text if isinstance(part, TextPart) and not part.thought else ""


class StreamSummary:
    """What a stream said besides its parts: usage, model version, why it stopped."""

    def __init__(self) -> None:
        self.usage_metadata: types.GenerateContentResponseUsageMetadata | None = None
        self.model_version: str | None = None
        self.finish_reason: str | None = None
        self.block_reason: str | None = None
        self.block_message: str | None = None
        self.finish_message: str | None = None
        self.grounding: types.GroundingMetadata | None = None
        self.url_context: types.UrlContextMetadata | None = None

    def observe(self, chunk: types.GenerateContentResponse) -> list[Part]:
        """Record the chunk's metadata; return its parts as domain parts, in order."""
        if chunk.usage_metadata is not None:
            self.usage_metadata = chunk.usage_metadata
        self.model_version = chunk.model_version or self.model_version
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            self.block_reason = str(feedback.block_reason.value)
            self.block_message = feedback.block_reason_message or self.block_message
        if not chunk.candidates:
            return []
        candidate = chunk.candidates[0]
        if candidate.finish_reason is not None:
            self.finish_reason = str(candidate.finish_reason.value)
            self.finish_message = candidate.finish_message or self.finish_message
        self.grounding = candidate.grounding_metadata or self.grounding
        self.url_context = candidate.url_context_metadata or self.url_context
        if candidate.content is None or not candidate.content.parts:
            return []
        return [part_from_sdk(p) for p in candidate.content.parts]

    def usage(self, model: str, latency_ms: float) -> Usage:
        """The reply's usage, from the last usage metadata of the stream."""
        meta = self.usage_metadata
        return Usage(
            prompt_tokens=meta.prompt_token_count if meta else None,
            output_tokens=meta.candidates_token_count if meta else None,
            thoughts_tokens=meta.thoughts_token_count if meta else None,
            cached_tokens=meta.cached_content_token_count if meta else None,
            model=self.model_version or model,
            latency_ms=round(latency_ms, 1),
        )

    def empty_reply_error(self) -> ModelError:
        """The error for a stream that ended without any part."""
        if self.block_reason:
            why = f" {self.block_message}" if self.block_message else ""
            return ModelError(
                "bad_request", f"Gemini blocked the request ({self.block_reason}).{why}"
            )
        reason = self.finish_reason or "none given"
        detail = f" {self.finish_message}" if self.finish_message else ""
        return ModelError(
            "unknown", f"Gemini returned an empty reply (finish reason: {reason}).{detail}"
        )

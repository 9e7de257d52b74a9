"""The context estimate counts attached files by what Gemini counts for them, not by the few
characters of the reference the event holds."""

from __future__ import annotations

from koroku_desktop.agent.context_size import (
    IMAGE_TOKENS,
    PDF_PAGE_TOKENS,
    estimate_tokens,
)
from koroku_desktop.agent.cut import (
    estimate_tokens as content_tokens,
)
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.parts import AttachmentPart, TextPart


def view_of(*events: MessageEvent) -> ContextView:
    return ContextView.from_tail(
        None, [StoredEvent(n, "c", 0.0, e, f"id{n}") for n, e in enumerate(events, 1)]
    )


def attached(mime: str, size: int) -> MessageEvent:
    return MessageEvent(
        role="user",
        parts=[
            TextPart(text="look at this"),
            AttachmentPart(sha256="0" * 64, mime_type=mime, name="f", size=size),
        ],
    )


def test_attachments_count_by_their_kind() -> None:
    text_only = estimate_tokens(
        view_of(MessageEvent(role="user", parts=[TextPart(text="look at this")]))
    )
    image = estimate_tokens(view_of(attached("image/png", 2_000_000)))
    assert image - text_only >= IMAGE_TOKENS - 30  # the reference's own JSON is small
    pdf = estimate_tokens(view_of(attached("application/pdf", 10_000_000)))
    assert pdf >= 250 * PDF_PAGE_TOKENS  # 10 MB: hundreds of pages, tens of thousands of tokens
    notes = estimate_tokens(view_of(attached("text/plain", 400_000)))
    assert 100_000 <= notes < 101_000
    audio = estimate_tokens(view_of(attached("audio/mpeg", 960_000)))  # a minute at 128 kbit/s
    assert 1_900 <= audio < 2_000  # Gemini: 32 tokens a second
    # The compaction cut weighs contents the same way.
    assert content_tokens(attached("image/jpeg", 10)) >= IMAGE_TOKENS

"""Media count what Gemini counts for them in every part, never their base64 characters: a
model reply carrying a 1.9 MB generated PNG stays in the next request instead of being
compacted away at once."""

from __future__ import annotations

import base64
import random
import struct
import zlib
from collections.abc import Callable

from koroku_desktop.agent.context_size import (
    IMAGE_TOKENS,
    TILE_TOKENS,
    estimate_tokens,
    part_tokens,
)
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import CompactionEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.parts import (
    FunctionResponsePart,
    InlineDataPart,
    TextPart,
    UnknownPart,
)
from tests.agent.conftest import Harness


def png(width: int, height: int, seed: int = 7) -> bytes:
    """A real PNG of noise (incompressible: about 3 bytes a pixel)."""
    rnd = random.Random(seed)
    rows = b"".join(b"\x00" + rnd.randbytes(width * 3) for _ in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 1))
        + chunk(b"IEND", b"")
    )


PICTURE = png(800, 800)  # 1.9 MB, as a generated image Gemini sends back
PICTURE_B64 = base64.b64encode(PICTURE).decode()


def view_of(*events: MessageEvent) -> ContextView:
    return ContextView.from_tail(
        None, [StoredEvent(n, "c", 0.0, e, f"id{n}") for n, e in enumerate(events, 1)]
    )


def test_the_picture_is_as_big_as_a_real_generated_one() -> None:
    assert 1_850_000 < len(PICTURE) < 2_000_000


def test_inline_images_count_by_their_tiles_in_every_kind_of_part() -> None:
    tiles = TILE_TOKENS * 2 * 2  # 800×800 is 2×2 tiles of 768×768
    assert part_tokens(InlineDataPart(mime_type="image/png", data=PICTURE_B64)) == tiles
    small = base64.b64encode(png(100, 80)).decode()
    assert part_tokens(InlineDataPart(mime_type="image/png", data=small)) == TILE_TOKENS
    # An MCP tool's image inside a function response: the response's JSON plus the image.
    mcp = FunctionResponsePart(
        name="screenshot",
        response={"result": "here"},
        parts=[InlineDataPart(mime_type="image/png", data=PICTURE_B64)],
    )
    assert tiles < part_tokens(mcp) < tiles + 50
    # A part this version does not know, carrying inline data (as code execution's files).
    unknown = UnknownPart(raw={"inlineData": {"mimeType": "image/png", "data": PICTURE_B64}})
    assert tiles <= part_tokens(unknown) < tiles + 50
    # Bytes whose size cannot be read still count as an image, not as characters.
    odd = InlineDataPart(mime_type="image/heic", data=base64.b64encode(b"x" * 900_000).decode())
    assert part_tokens(odd) == IMAGE_TOKENS
    # Audio and unreadable base64 count by their decoded size.
    audio = InlineDataPart(mime_type="audio/mpeg", data=base64.b64encode(b"a" * 960_000).decode())
    assert 1_900 <= part_tokens(audio) < 2_000
    broken = InlineDataPart(mime_type="image/png", data="%%not base64%%" * 1000)
    assert part_tokens(broken) == IMAGE_TOKENS


def test_a_reply_with_a_generated_image_is_estimated_as_gemini_counts_it() -> None:
    reply = MessageEvent(
        role="model",
        parts=[
            TextPart(text="Here is your picture."),
            InlineDataPart(mime_type="image/png", data=PICTURE_B64),
        ],
    )
    question = MessageEvent(role="user", parts=[TextPart(text="draw a cat")])
    assert estimate_tokens(view_of(question, reply)) < 2_000  # not ~645,000


async def test_the_next_request_still_carries_the_generated_image(
    harness_factory: Callable[..., Harness],
) -> None:
    harness = harness_factory(compact_at=20_000)
    harness.fake.reply_parts(
        {"text": "Here is your picture."},
        {
            "inlineData": {"mimeType": "image/png", "data": PICTURE_B64},
            "thoughtSignature": base64.b64encode(b"sig-of-the-image").decode(),
        },
    )
    harness.fake.reply_text("It is a noisy square.")
    assert (await harness.run_turn("draw me a picture")).ok
    assert harness.agent.estimate_context_tokens() < 20_000
    assert (await harness.run_turn("what did you draw?")).ok

    entries = harness.log.entries(harness.agent.conversation_id)
    assert not [
        e for e in entries if isinstance(e, StoredEvent) and isinstance(e.event, CompactionEvent)
    ]
    second = harness.turn_requests()[-1]
    sent = [p for c in second.contents for p in c.get("parts", []) if "inlineData" in p]
    assert [base64.urlsafe_b64decode(p["inlineData"]["data"]) for p in sent] == [PICTURE]
    assert base64.urlsafe_b64decode(sent[0]["thoughtSignature"]) == b"sig-of-the-image"

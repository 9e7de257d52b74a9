"""What a 10 MB attachment costs a turn, against a plain-text turn, on the fake Gemini server.

Every case is one `GeminiChatModel.generate` with the real google-genai client over
localhost (so the figures are Koroku's and the SDK's overhead, not the network's):
  text      a plain question (the baseline)
  inline    the same with a 10 MB PDF forced inline (read from the blob store, base64 on the
            wire; the fake server's parsing of the 13 MB body is in this figure too)
  upload    a 10 MB PDF past the inline budget: uploaded through the Files API, then sent as a URI
  reuse     the next turn with that upload: its URI comes from uploads.json, nothing is uploaded
Also the cost of keeping the file (`AttachmentStore.keep`: hash and atomic 0600 write).

Run by hand:  uv run python benchmarks/bench_attachments.py [--repeat N]
Prints ratios to the text turn and writes benchmarks/results/bench_attachments.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from koroku_desktop.blobs.attachments import AttachmentStore
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.domain.attachment import check_attachment
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelRequest
from koroku_desktop.domain.parts import AttachmentPart, Part, TextPart
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.llm.upload_cache import UploadCache
from tests.fakes.gemini_server import FakeGemini

RESULTS = Path(__file__).resolve().parent / "results"
SIZE = 10_000_000


def request(attached: AttachmentPart | None) -> ModelRequest:
    parts: list[Part] = [TextPart(text="What does this say?")]
    if attached is not None:
        parts.insert(0, attached)
    user = MessageEvent(role="user", origin="person", parts=parts)
    return ModelRequest(model="gemini-bench", system_instruction="", contents=[user])


async def timed(fn: Callable[[], Awaitable[object]], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def run(repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp, FakeGemini() as fake:
        os.environ["GOOGLE_GEMINI_BASE_URL"] = fake.base_url
        store = AttachmentStore(BlobStore(Path(tmp) / "blobs"))
        pdf = b"%PDF-1.7\n" + os.urandom(SIZE - 9)
        pending = check_attachment(pdf, "big.pdf")
        started = time.perf_counter()
        part = store.keep(pending)
        keep_s = time.perf_counter() - started
        inline = GeminiChatModel("bench-key", read_blob=store.read)
        assert inline.attachments is not None
        inline.attachments.inline_file_max = SIZE  # force inline (it would be uploaded)
        uploads = UploadCache(Path(tmp) / "uploads.json")

        async def upload_turn() -> None:
            model = GeminiChatModel(
                "bench-key", read_blob=store.read, uploads=uploads, inline_budget=0
            )
            uploads.path.unlink(missing_ok=True)  # every sample uploads afresh
            await model.generate(request(part))
            await model.aclose()

        reusing = GeminiChatModel(
            "bench-key", read_blob=store.read, uploads=uploads, inline_budget=0
        )
        text_s = await timed(lambda: inline.generate(request(None)), repeat)
        inline_s = await timed(lambda: inline.generate(request(part)), repeat)
        upload_s = await timed(upload_turn, repeat)
        await reusing.generate(request(part))  # records the upload
        reuse_s = await timed(lambda: reusing.generate(request(part)), repeat)
        await inline.aclose()
        await reusing.aclose()
    return {
        "text_s": text_s,
        "inline_s": inline_s,
        "upload_s": upload_s,
        "reuse_s": reuse_s,
        "keep_s": keep_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    figures = asyncio.run(run(args.repeat))
    base = figures["text_s"]
    print(f"10 MB attachment vs a plain-text turn (median of {args.repeat}, fake server):")
    for case in ("text", "inline", "upload", "reuse"):
        seconds = figures[f"{case}_s"]
        print(f"  {case:<7} {seconds * 1000:8.1f} ms   x{seconds / base:7.1f}")
    print(f"  keeping the file in the blob store: {figures['keep_s'] * 1000:.1f} ms (once)")
    RESULTS.mkdir(exist_ok=True)
    ratios = {f"{k}_ratio": v / base for k, v in figures.items() if k != "keep_s"}
    out = {**figures, **ratios, "repeat": args.repeat, "size_bytes": SIZE}
    (RESULTS / "bench_attachments.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

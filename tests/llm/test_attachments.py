"""Attachments on the wire: the real SDK against the fake server's generate and Files API.

Small files go inline; past the inline budget they are uploaded (resumable protocol) and
sent as file URIs, reused while they live, uploaded again from the blob store once they have
expired or when the service says they are gone. A missing blob fails only the turn that
attaches it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.blobs.attachments import AttachmentStore
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.domain.attachment import check_attachment
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest
from koroku_desktop.domain.parts import AttachmentPart, Part, TextPart
from koroku_desktop.llm.gemini import GeminiChatModel
from koroku_desktop.llm.upload_cache import UploadCache
from tests.fakes import FakeGemini
from tests.fakes.gemini_replies import decode_b64
from tests.llm.conftest import make_model

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
PDF = b"%PDF-1.7\n" + b"0123456789abcdef" * 4096


@pytest.fixture
def attachments(tmp_path: Path) -> AttachmentStore:
    return AttachmentStore(BlobStore(tmp_path / "blobs"))


def attachment_model(store: AttachmentStore, cache: Path, **kwargs: object) -> GeminiChatModel:
    return make_model(read_blob=store.read, uploads=UploadCache(cache), **kwargs)


def keep(store: AttachmentStore, data: bytes, name: str) -> AttachmentPart:
    return store.keep(check_attachment(data, name))


def turn(text: str, *attached: AttachmentPart) -> MessageEvent:
    parts: list[Part] = [*attached, TextPart(text=text)]
    return MessageEvent(role="user", origin="person", parts=parts)


def request(*contents: MessageEvent) -> ModelRequest:
    return ModelRequest(model="gemini-test", system_instruction="", contents=list(contents))


def mime(data: dict[str, Any]) -> str:
    """The SDK writes the part keys in camel case and the blob's fields in snake case."""
    return str(data.get("mimeType") or data.get("mime_type"))


def file_uri(part: dict[str, Any]) -> str:
    data = part["fileData"]
    return str(data.get("fileUri") or data.get("file_uri"))


def sent_parts(fake: FakeGemini, n: int = -1) -> list[dict[str, Any]]:
    return [p for c in fake.generate_requests()[n].contents for p in c["parts"]]


async def test_a_small_file_goes_inline_byte_for_byte(
    fake_gemini: FakeGemini, attachments: AttachmentStore, tmp_path: Path
) -> None:
    model = attachment_model(attachments, tmp_path / "uploads.json")
    part = keep(attachments, PNG, "shot.png")
    reply = await model.generate(request(turn("what is this?", part)))
    await model.aclose()
    assert reply.parts
    inline = [p["inlineData"] for p in sent_parts(fake_gemini) if "inlineData" in p]
    assert [(mime(i), decode_b64(i["data"])) for i in inline] == [("image/png", PNG)]
    assert fake_gemini.files.uploads == 0


async def test_over_the_inline_budget_a_file_is_uploaded_once_and_reused(
    fake_gemini: FakeGemini, attachments: AttachmentStore, tmp_path: Path
) -> None:
    model = attachment_model(attachments, tmp_path / "uploads.json", inline_budget=10_000)
    small = keep(attachments, PNG, "small.png")
    big = keep(attachments, PDF, "report.pdf")
    first = turn("read these", small, big)
    reply = await model.generate(request(first))
    parts = sent_parts(fake_gemini)
    assert "inlineData" in parts[0]
    uri = file_uri(parts[1])
    stored = fake_gemini.files.by_uri(uri)
    assert stored is not None and stored.data == PDF and stored.mime_type == "application/pdf"
    assert stored.display_name == "report.pdf"
    # The next turn (a new model: another process) sends the same URI, no new upload.
    again = attachment_model(attachments, tmp_path / "uploads.json", inline_budget=10_000)
    await again.generate(request(first, reply, turn("and now?")))
    await model.aclose()
    await again.aclose()
    assert fake_gemini.files.uploads == 1
    assert file_uri(sent_parts(fake_gemini)[1]) == uri


async def test_an_expired_upload_is_uploaded_again_from_the_blob(
    fake_gemini: FakeGemini, attachments: AttachmentStore, tmp_path: Path
) -> None:
    cache = tmp_path / "uploads.json"
    model = attachment_model(attachments, cache, inline_budget=0)
    big = keep(attachments, PDF, "report.pdf")
    reply = await model.generate(request(turn("read", big)))
    old_uri = file_uri(sent_parts(fake_gemini)[0])
    # The service lets it expire early (our cache still believes it lives).
    fake_gemini.files.expire()
    await model.generate(request(turn("read", big), reply, turn("again")))
    await model.aclose()
    requests = fake_gemini.generate_requests()
    assert len(requests) == 3  # the refused one (403), then the one with a fresh upload
    new_uri = file_uri(sent_parts(fake_gemini)[0])
    assert new_uri != old_uri
    stored = fake_gemini.files.by_uri(str(new_uri))
    assert stored is not None and stored.data == PDF
    assert fake_gemini.files.uploads == 2


async def test_an_upload_near_its_expiry_is_replaced_before_sending(
    fake_gemini: FakeGemini, attachments: AttachmentStore, tmp_path: Path
) -> None:
    cache = UploadCache(tmp_path / "uploads.json")
    model = attachment_model(attachments, cache.path, inline_budget=0)
    big = keep(attachments, PDF, "report.pdf")
    await model.generate(request(turn("read", big)))
    # Rewrite the cache as if the upload were about to expire.
    (key_sha,) = [k for k in cache._load()]
    key, sha = key_sha.split(":")
    known = cache.get(sha, key)
    assert known is not None
    cache.put(sha, key, known.__class__(**{**known.__dict__, "expires_at": time.time() + 60}), 0)
    await model.generate(request(turn("read", big)))
    await model.aclose()
    assert fake_gemini.files.uploads == 2
    assert len(fake_gemini.generate_requests()) == 2  # replaced before sending, not after a 403


async def test_an_unknown_file_uri_is_refused_like_the_service(fake_gemini: FakeGemini) -> None:
    from google import genai
    from google.genai import errors, types

    client = genai.Client(api_key="test-key")
    part = types.Part(
        file_data=types.FileData(
            file_uri="https://generativelanguage.googleapis.com/v1beta/files/nope"
        )
    )
    with pytest.raises(errors.ClientError) as caught:
        await client.aio.models.generate_content(model="gemini-test", contents=[part])
    assert caught.value.code == 403
    assert "nope" in str(caught.value)


async def test_the_fake_refuses_a_request_over_20_mb(fake_gemini: FakeGemini) -> None:
    from google import genai
    from google.genai import errors, types

    fake_gemini.files.max_request_bytes = 50_000  # the same check, at a size a test affords
    client = genai.Client(api_key="test-key")
    blob = types.Part(inline_data=types.Blob(mime_type="image/png", data=PNG * 30))
    with pytest.raises(errors.ClientError) as caught:
        await client.aio.models.generate_content(model="gemini-test", contents=[blob])
    assert caught.value.code == 400 and "payload size exceeds" in str(caught.value)


async def test_files_get_answers_while_a_file_lives(fake_gemini: FakeGemini) -> None:
    import io

    from google import genai
    from google.genai import errors

    client = genai.Client(api_key="test-key")
    file = await client.aio.files.upload(
        file=io.BytesIO(PDF), config={"mime_type": "application/pdf", "display_name": "a.pdf"}
    )
    assert file.name is not None and file.size_bytes == len(PDF)
    assert file.expiration_time is not None
    got = await client.aio.files.get(name=file.name)
    assert got.uri == file.uri
    fake_gemini.files.expire(file.name)
    with pytest.raises(errors.ClientError):
        await client.aio.files.get(name=file.name)


async def test_a_missing_blob_fails_its_own_turn_with_a_clear_error(
    fake_gemini: FakeGemini, attachments: AttachmentStore, tmp_path: Path
) -> None:
    model = attachment_model(attachments, tmp_path / "uploads.json")
    part = keep(attachments, PNG, "shot.png")
    attachments.path(part.sha256).unlink()
    with pytest.raises(ModelError) as caught:
        await model.generate(request(turn("what is this?", part)))
    assert "shot.png" in caught.value.message and "Attach it again" in caught.value.message
    assert fake_gemini.generate_requests() == []  # nothing was sent
    # In an older turn it is a note: the conversation goes on.
    old = turn("what is this?", part)
    answer = MessageEvent(role="model", origin="model", parts=[TextPart(text="a picture")])
    await model.generate(request(old, answer, turn("thanks")))
    await model.aclose()
    texts = [p.get("text", "") for p in sent_parts(fake_gemini)]
    assert any("'shot.png'" in str(t) and "no longer available" in str(t) for t in texts)


async def test_a_file_over_2_mb_is_uploaded_even_when_the_request_has_room(
    fake_gemini: FakeGemini, attachments: AttachmentStore, tmp_path: Path
) -> None:
    model = attachment_model(attachments, tmp_path / "uploads.json")  # default limits
    audio = keep(attachments, b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(2_000_000), "memo.mp3")
    small = keep(attachments, PNG, "shot.png")
    await model.generate(request(turn("listen", audio, small)))
    await model.aclose()
    parts = sent_parts(fake_gemini)
    stored = fake_gemini.files.by_uri(file_uri(parts[0]))
    assert stored is not None and stored.mime_type == "audio/mp3" and len(stored.data) == 2_000_010
    assert "inlineData" in parts[1]

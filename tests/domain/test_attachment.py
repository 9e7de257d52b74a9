"""What may be attached: the type from the content, refusals with reasons, the stored part."""

from __future__ import annotations

import pytest

from koroku_desktop.domain.attachment import (
    MAX_ATTACHMENT_BYTES,
    AttachmentRefused,
    check_attachment,
    human_size,
    kind_label,
    sniff_mime,
)
from koroku_desktop.domain.parts import PART_ADAPTER, AttachmentPart

SAMPLES = {
    "image/png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "image/jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00",
    "image/gif": b"GIF89a\x01\x00\x01\x00",
    "image/webp": b"RIFF\x24\x00\x00\x00WEBPVP8 ",
    "image/heic": b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic",
    "image/heif": b"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00mif1miaf",
    "application/pdf": b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n",
    "audio/wav": b"RIFF\x24\x00\x00\x00WAVEfmt ",
    "audio/mp3": b"ID3\x04\x00\x00\x00\x00\x00\x00",
    "audio/ogg": b"OggS\x00\x02\x00\x00",
    "audio/flac": b"fLaC\x00\x00\x00\x22",
    "audio/aac": b"\xff\xf1\x50\x80\x02\x1f\xfc",
    "audio/aiff": b"FORM\x00\x00\x00\x00AIFFCOMM",
}


@pytest.mark.parametrize(("mime", "data"), SAMPLES.items())
def test_binary_kinds_are_told_by_their_magic_numbers(mime: str, data: bytes) -> None:
    assert sniff_mime(data + bytes(64)) == mime


def test_an_mp3_without_a_tag_is_told_by_its_frame_header() -> None:
    assert sniff_mime(b"\xff\xfb\x90\x64" + bytes(100)) == "audio/mp3"


def test_text_and_source_are_plain_text_whatever_the_name() -> None:
    assert sniff_mime("def f():\n    return 'ünïcode'\n".encode()) == "text/plain"
    assert sniff_mime("\ufeffa,b\n1,2\n".encode("utf-16")) == "text/plain"
    # A multi-byte character cut by the 64 KB sample is still text.
    assert sniff_mime(("x" * 65535 + "é" * 10).encode()) == "text/plain"


def test_binary_that_is_no_supported_kind_is_refused_whatever_its_name() -> None:
    assert sniff_mime(b"\x7fELF\x02\x01\x01" + bytes(100)) is None
    assert sniff_mime(b"PK\x03\x04" + bytes(100)) is None  # a zip (or .docx)
    with pytest.raises(AttachmentRefused, match=r"photo\.png is not a kind of file Gemini"):
        check_attachment(b"PK\x03\x04" + bytes(100), "photo.png")


def test_the_content_decides_not_the_name() -> None:
    pending = check_attachment(SAMPLES["application/pdf"], "looks-like.png")
    assert pending.mime_type == "application/pdf" and pending.name == "looks-like.png"


def test_empty_and_oversized_files_are_refused_with_the_reason() -> None:
    with pytest.raises(AttachmentRefused, match="empty"):
        check_attachment(b"", "nothing.txt")
    with pytest.raises(AttachmentRefused, match=r"too big to attach \(50\.0 MB"):
        check_attachment(b"a" * (MAX_ATTACHMENT_BYTES + 1), "huge.txt")


def test_a_nameless_attachment_gets_a_name_from_its_type() -> None:
    assert check_attachment(SAMPLES["image/png"], "").name == "attachment.png"


def test_the_stored_part_is_small_and_round_trips() -> None:
    part = check_attachment(SAMPLES["image/png"] * 1000, "shot.png").part("ab" * 32)
    dumped = part.model_dump_json(exclude_none=True)  # as the event log stores it
    assert '"server"' not in dumped and '"uri"' not in dumped  # a file's part is unchanged
    assert len(dumped) < 200 and "IHDR" not in dumped
    assert PART_ADAPTER.validate_json(dumped) == part
    assert isinstance(part, AttachmentPart) and part.size == len(SAMPLES["image/png"]) * 1000


def test_sizes_and_kinds_read_well() -> None:
    assert [human_size(n) for n in (999, 12_400, 3_100_000, 250_000_000)] == [
        "999 B",
        "12.4 KB",
        "3.1 MB",
        "250 MB",
    ]
    assert [kind_label(m) for m in ("image/png", "application/pdf", "text/plain", None)] == [
        "PNG image",
        "PDF",
        "Text",
        "File",
    ]

"""What may be attached, decided from the bytes: a small magic-number sniffer, pure Python.

The type is read from the content, never trusted from the name: a `.png` that is really a PDF
is sent as a PDF, and a renamed binary is refused. Only kinds Gemini reads are accepted
(images, PDF, text and source code, audio). A dependency such as `python-magic` needs
libmagic and its database in the PyInstaller bundle, and `filetype` cannot tell text from
binary; the dozen signatures Gemini accepts fit in this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.parts import AttachmentPart

MAX_ATTACHMENT_BYTES = 50_000_000
"""The largest file Koroku attaches (Gemini reads PDFs up to 50 MB)."""

SUPPORTED = (
    "images (PNG, JPEG, WebP, GIF, HEIC), PDF, text and source files, "
    "and audio (WAV, MP3, OGG, FLAC, AAC, AIFF)"
)

_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis"}
_HEIF_GENERIC = {b"mif1", b"msf1"}


class AttachmentRefused(RefusedError, ValueError):
    """This file cannot be attached; the message names it and says why (shown as is)."""


@dataclass(frozen=True)
class PendingAttachment:
    """A checked file waiting to be sent: its bytes, name and sniffed type (not stored yet)."""

    data: bytes
    name: str
    mime_type: str
    server: str | None = None
    """An MCP resource's server (None: a file)."""
    uri: str | None = None
    """An MCP resource's URI (None: a file)."""

    @property
    def size(self) -> int:
        """Its size in bytes."""
        return len(self.data)

    def part(self, sha256: str) -> AttachmentPart:
        """The part that references its stored copy."""
        return AttachmentPart(
            sha256=sha256,
            mime_type=self.mime_type,
            name=self.name,
            size=self.size,
            server=self.server,
            uri=self.uri,
        )


def _riff(data: bytes) -> str | None:
    form = data[8:12]
    return {b"WEBP": "image/webp", b"WAVE": "audio/wav"}.get(form)


def _iso_media(data: bytes) -> str | None:
    """HEIC/HEIF images (an ISO media file whose `ftyp` names a HEIF brand)."""
    if data[4:8] != b"ftyp":
        return None
    size = int.from_bytes(data[0:4], "big")
    brands = [data[8:12]] + [data[i : i + 4] for i in range(16, min(size, 64), 4)]
    if any(b in _HEIF_BRANDS for b in brands):
        return "image/heic"
    if any(b in _HEIF_GENERIC for b in brands):
        return "image/heif"
    return None


def _mpeg_audio(data: bytes) -> str | None:
    if data.startswith(b"ID3"):
        return "audio/mp3"
    if len(data) < 2 or data[0] != 0xFF:
        return None
    if data[1] & 0xF6 == 0xF0:  # ADTS: sync, layer 00
        return "audio/aac"
    if data[1] & 0xE0 == 0xE0 and data[1] & 0x06:  # MPEG audio frame, layer I-III
        return "audio/mp3"
    return None


def _binary_kind(data: bytes) -> str | None:
    """The type of a binary file from its magic number, or None."""
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"RIFF"):
        return _riff(data)
    if head.startswith(b"OggS"):
        return "audio/ogg"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if head.startswith(b"FORM") and data[8:12] in (b"AIFF", b"AIFC"):
        return "audio/aiff"
    return _iso_media(data) or _mpeg_audio(data)


def _is_text(data: bytes) -> bool:
    """UTF-8 (or UTF-16 with a BOM) without NUL bytes and with few control characters."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            return False
    else:
        sample = data[: 64 * 1024]
        try:
            text = sample.decode("utf-8")
        except UnicodeDecodeError as exc:
            # A multi-byte character cut by the sample's end is still text.
            if exc.start < len(sample) - 3 or len(sample) == len(data):
                return False
            text = sample[: exc.start].decode("utf-8")
    if "\x00" in text:
        return False
    controls = sum(1 for c in text[:65536] if ord(c) < 32 and c not in "\t\n\r\f\v\x1b")
    return controls <= len(text[:65536]) // 100


def sniff_mime(data: bytes) -> str | None:
    """The MIME type Gemini should be told for these bytes, or None when it is not supported."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) and _is_text(data):
        return "text/plain"  # UTF-16 text: its byte-order mark looks like an MPEG frame sync
    kind = _binary_kind(data)
    if kind is not None:
        return kind
    return "text/plain" if _is_text(data) else None


def check_size(data: bytes, label: str) -> None:
    """Raise `AttachmentRefused` when `data` (called `label`) is empty or over the limit."""
    if not data:
        raise AttachmentRefused(f"{label} is empty: there is nothing to attach.")
    if len(data) > MAX_ATTACHMENT_BYTES:
        raise AttachmentRefused(
            f"{label} is too big to attach ({human_size(len(data))}; "
            f"the limit is {human_size(MAX_ATTACHMENT_BYTES)})."
        )


def check_attachment(data: bytes, name: str) -> PendingAttachment:
    """Accept `data` (a file called `name`) as an attachment, or raise `AttachmentRefused`."""
    label = name or "the attachment"
    check_size(data, label)
    mime = sniff_mime(data)
    if mime is None:
        raise AttachmentRefused(
            f"{label} is not a kind of file Gemini can read. Koroku attaches {SUPPORTED}."
        )
    return PendingAttachment(data=data, name=name or _default_name(mime), mime_type=mime)


def _default_name(mime: str) -> str:
    ext = {"text/plain": "txt", "application/pdf": "pdf", "audio/mp3": "mp3"}.get(mime)
    return f"attachment.{ext or mime.split('/')[-1]}"


def human_size(size: int) -> str:
    """A byte count as a person reads it: 980 B, 12.4 KB, 3.1 MB."""
    if size < 1000:
        return f"{size} B"
    for unit in ("KB", "MB", "GB"):
        size_f = size / 1000 ** ("KMG".index(unit[0]) + 1)
        if size_f < 1000 or unit == "GB":
            return f"{size_f:.1f} {unit}" if size_f < 100 else f"{size_f:.0f} {unit}"
    return f"{size} B"  # pragma: no cover - the loop always returns


def kind_label(mime: str | None) -> str:
    """A short word for a MIME type on a file card: PNG image, PDF, Text, MP3 audio."""
    if not mime:
        return "File"
    major, _, minor = mime.partition("/")
    if mime == "application/pdf":
        return "PDF"
    if major == "text":
        return "Text"
    if major in ("image", "audio"):
        return f"{minor.upper()} {major}"
    return mime

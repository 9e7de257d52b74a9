"""Which content types Gemini reads, and how: text types as text, some binaries inline.

One place for the MCP client (a tool result's blobs) and the Gemini adapter (an attached
MCP resource): text and JSON types are read as text, the types below go as inline data or
uploads, and any other binary type is named, never sent.
"""

from __future__ import annotations

GEMINI_INLINE = frozenset(
    {
        "image/png", "image/jpeg", "image/webp", "image/heic", "image/heif",
        "audio/wav", "audio/mp3", "audio/mpeg", "audio/aiff", "audio/aac", "audio/ogg",
        "audio/flac", "video/mp4", "video/mpeg", "video/mov", "video/quicktime", "video/avi",
        "video/x-flv", "video/mpg", "video/webm", "video/wmv", "video/3gpp", "application/pdf",
    }
)  # fmt: skip
"""Types Gemini takes as inline data; other binary types are named, not sent."""

_TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/yaml",
     "application/x-yaml", "application/toml", "application/sql", "application/x-sh",
     "application/graphql", "application/ld+json", "image/svg+xml"}
)  # fmt: skip


def base_type(mime: str | None) -> str:
    """`mime` without parameters, lower case (`application/octet-stream` when unknown)."""
    return (mime or "application/octet-stream").split(";", 1)[0].strip().lower()


def is_text_type(mime: str) -> bool:
    """Whether content of `mime` is text a person (and the model) reads as such."""
    base = base_type(mime)
    return base.startswith("text/") or base in _TEXT_TYPES or base.endswith(("+json", "+xml"))

"""Recognising a pasted API key, so it never lands in the conversation (and the log)."""

from __future__ import annotations

import re

# Google API keys: "AIza" and 35 URL-safe characters. A lone token of that shape is a key.
_KEY = re.compile(r"^AIza[0-9A-Za-z_\-]{30,}$")


def looks_like_api_key(text: str) -> bool:
    """Whether `text` is nothing but something shaped like a Google API key."""
    return bool(_KEY.match(text.strip()))

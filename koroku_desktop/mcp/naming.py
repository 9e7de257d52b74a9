"""Function names for MCP tools: `<server>_<tool>` within Gemini's function-name rules.

Gemini accepts letters, digits, `_`, `.` and `-`, starting with a letter or an underscore,
at most 64 characters. Names that collide (with each other or with Koroku's own tools) or
that are too long get a short hash of the server and tool, so the result depends only on
the set of tools, never on the order servers answered in.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Collection, Iterable

MAX_NAME = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_.\-]")
_HASH_CHARS = 6


def base_name(server: str, tool: str) -> str:
    """`<server>_<tool>` with every disallowed character replaced by `_`."""
    name = _NOT_ALLOWED.sub("_", f"{server}_{tool}")
    return name if re.match(r"[A-Za-z_]", name) else f"_{name}"


def _hashed(server: str, tool: str, base: str) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_CHARS]
    return f"{base[: MAX_NAME - _HASH_CHARS - 1]}_{digest}"


def assign_names(
    tools: Iterable[tuple[str, str]], reserved: Collection[str] = ()
) -> dict[tuple[str, str], str]:
    """(server, tool) -> a unique valid function name, not clashing with `reserved`."""
    pairs = sorted(set(tools))
    bases = {pair: base_name(*pair) for pair in pairs}
    counts = Counter(bases.values())
    names: dict[tuple[str, str], str] = {}
    for pair, base in bases.items():
        clash = counts[base] > 1 or base in reserved or len(base) > MAX_NAME
        names[pair] = _hashed(*pair, base) if clash else base
    return names

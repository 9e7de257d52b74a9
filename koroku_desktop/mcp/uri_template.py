"""URI templates (RFC 6570) as MCP resource templates use them: their variables, expanded.

Enough of the RFC for resource templates: simple `{x}`, reserved `{+x}`, fragment `{#x}`,
label `{.x}`, path `{/x}`, and the query forms `{?x,y}` and `{&x}`; lists and prefix
modifiers are not used by MCP servers and are read as plain names. No SDK import.
"""

from __future__ import annotations

import re
from urllib.parse import quote

_EXPR = re.compile(r"\{([+#./;?&]?)([^}]*)\}")
_FIRST = {"": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&"}
_SEP = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&"}


def _names(spec: str) -> list[str]:
    return [n.split(":", 1)[0].rstrip("*").strip() for n in spec.split(",") if n.strip()]


def variables(template: str) -> list[str]:
    """The template's variable names, in order, each once."""
    found: list[str] = []
    for match in _EXPR.finditer(template):
        found.extend(n for n in _names(match.group(2)) if n and n not in found)
    return found


def expand(template: str, values: dict[str, str]) -> str:
    """The URI with `values` put in (a missing or empty value leaves its part out)."""

    def one(match: re.Match[str]) -> str:
        op = match.group(1)
        safe = ":/?#[]@!$&'()*+,;=" if op in ("+", "#") else ""
        parts = []
        for name in _names(match.group(2)):
            value = values.get(name, "")
            if not value:
                continue
            text = quote(value, safe=safe)
            parts.append(f"{name}={text}" if op in ("?", "&", ";") else text)
        return _FIRST[op] + _SEP[op].join(parts) if parts else ""

    return _EXPR.sub(one, template)

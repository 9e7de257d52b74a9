"""A server's request for input (MCP elicitation) as a prompt in `koroku chat`.

Form mode asks field by field (Enter keeps a default or skips an optional field; `:decline`
declines, `:cancel` cancels); URL mode names the host and opens the page only after a yes.
The end of input cancels; the manager declines a request left unanswered too long. Ctrl-C
cancels the request and stops the turn, as at the approval question; the chat goes on.
"""

from __future__ import annotations

import sys
import webbrowser
from collections.abc import Awaitable, Callable
from typing import Any, TextIO
from urllib.parse import urlsplit

from koroku_desktop.app.runtime import McpElicitAnswer, McpElicitation, elicit_form

AskLine = Callable[[str], Awaitable[str]]

TRUE_WORDS = elicit_form.TRUE_WORDS


class _Stop(Exception):
    def __init__(self, action: str) -> None:
        super().__init__(action)
        self.action = action


def _label(name: str, prop: dict[str, Any], required: bool) -> str:
    about = prop.get("description") or prop.get("title") or ""
    bits = [name + ("" if required else " (optional)")]
    if about:
        bits.append(f"— {about}")
    choices = elicit_form.choices(prop)
    if choices:
        bits.append(
            "[" + ", ".join(f"{i} {label}" for i, (_, label) in enumerate(choices, 1)) + "]"
        )
    if "default" in prop:
        bits.append(f"(Enter: {prop['default']})")
    return " ".join(bits)


async def _form(request: McpElicitation, ask: AskLine, out: TextIO) -> dict[str, Any]:
    schema = request.schema
    required = set(schema.get("required", []))
    content: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        out.write(f"  {_label(name, prop, name in required)}\n")
        while True:
            raw = (await ask(f"  {name}> ")).strip()
            if raw in (":decline", ":cancel"):
                raise _Stop(raw[1:])
            if not raw:
                if "default" in prop:
                    content[name] = prop["default"]
                elif name in required:
                    out.write(f"  ({name} is required)\n")
                    continue
                break
            try:
                content[name] = elicit_form.convert(raw, prop)
                break
            except ValueError as exc:
                out.write(f"  ({exc})\n")
    return content


def terminal_elicitor(
    ask: AskLine, out: TextIO = sys.stderr, stop_turn: Callable[[], object] | None = None
) -> Callable[[McpElicitation], Awaitable[McpElicitAnswer]]:
    """An elicitor that asks on the terminal through `ask` (one line at a time); Ctrl-C at
    its prompt cancels the request and calls `stop_turn`."""

    async def elicit(request: McpElicitation) -> McpElicitAnswer:
        out.write(f"\nMCP server {request.server!r} asks: {request.message}\n")
        try:
            if request.url is not None:
                host = urlsplit(request.url).hostname or request.url
                out.write(f"  It wants you to open a page on {host}:\n  {request.url}\n")
                word = (await ask(f"  Open it on {host}? [y/N, c cancels] ")).strip().lower()
                if word in ("c", "cancel", ":cancel"):
                    return McpElicitAnswer("cancel")
                if word not in TRUE_WORDS:
                    return McpElicitAnswer("decline")
                webbrowser.open(request.url)
                return McpElicitAnswer("accept")
            out.write("  (Enter keeps a default or skips; :decline declines, :cancel cancels)\n")
            return McpElicitAnswer("accept", await _form(request, ask, out))
        except _Stop as stop:
            return McpElicitAnswer("decline" if stop.action == "decline" else "cancel")
        except EOFError:
            return McpElicitAnswer("cancel")
        except KeyboardInterrupt:  # the prompt's Ctrl-C: not the chat's end
            out.write("\n  (the server's question is cancelled)\n")
            if stop_turn is not None:
                stop_turn()
            return McpElicitAnswer("cancel")

    return elicit

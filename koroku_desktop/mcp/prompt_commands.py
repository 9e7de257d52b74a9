"""MCP prompts as slash commands, for every front end: `/server:name key=value ...`.

What `koroku chat` and the desktop composer share (no SDK, no Qt, no terminal): the usage
line a list shows, reading typed arguments, which required ones are still missing, and
settling a typed value on the server's one completion of it.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable

from koroku_desktop.mcp.extras import McpPromptError
from koroku_desktop.mcp.state import McpPromptInfo

Complete = Callable[[McpPromptInfo, str, str, dict[str, str]], Awaitable[list[str]]]
"""The server's completions of one argument (prompt, argument, typed value, known args)."""


def command(prompt: McpPromptInfo) -> str:
    """`/server:name`, as typed."""
    return f"/{prompt.server}:{prompt.name}"


def arguments_text(prompt: McpPromptInfo) -> str:
    """`city [state]`: required arguments bare, optional ones in brackets."""
    return " ".join(n if required else f"[{n}]" for n, required, _ in prompt.arguments)


def usage(prompt: McpPromptInfo) -> str:
    """`/ev:args-prompt city [state] — description`."""
    args = arguments_text(prompt)
    head = command(prompt) + (f" {args}" if args else "")
    return f"{head} — {prompt.description}" if prompt.description else head


def parse_args(rest: str, prompt: McpPromptInfo) -> dict[str, str]:
    """`key=value` words (quoted as in a shell); a bare word fills the next argument."""
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise McpPromptError(f"cannot read the arguments: {exc}") from exc
    names = [n for n, _, _ in prompt.arguments]
    args: dict[str, str] = {}
    for word in words:
        key, found, value = word.partition("=")
        if found and key in names:
            args[key] = value
            continue
        free = next((n for n in names if n not in args), None)
        if free is None:
            raise McpPromptError(f"too many arguments for {prompt.name!r}: {word!r}")
        args[free] = word
    return args


def missing(prompt: McpPromptInfo, args: dict[str, str]) -> list[str]:
    """The required arguments `args` does not fill yet, in order."""
    return [n for n, required, _ in prompt.arguments if required and not args.get(n)]


async def settle_value(
    complete: Complete, prompt: McpPromptInfo, name: str, value: str, args: dict[str, str]
) -> str:
    """`value`, or the server's completion of it when it has exactly one (`Al` -> `Alice`)."""
    if not value:
        return value
    options = await complete(prompt, name, value, args)
    if value in options:
        return value
    return options[0] if len(options) == 1 else value

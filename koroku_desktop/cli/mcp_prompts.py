"""MCP prompts as slash commands in `koroku chat`: `/prompts` lists them, `/server:name
key=value ...` sends one as your message, asking for each missing argument with the
server's completions as suggestions."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

from koroku_desktop.app.runtime import McpManager, McpPromptError, McpPromptInfo
from koroku_desktop.app.runtime import prompt_commands as shared

usage = shared.usage
parse_args = shared.parse_args

AskLine = Callable[[str], Awaitable[str]]
"""Reads one line from the person after showing a prompt (EOFError at the end of input)."""

SUGGESTIONS_SHOWN = 8


def list_text(manager: McpManager | None) -> str:
    """What `/prompts` prints."""
    prompts = manager.prompts() if manager is not None else []
    if not prompts:
        return "(no MCP server offers prompts)"
    return "\n".join(usage(p) for p in prompts)


def is_prompt_command(manager: McpManager | None, text: str) -> McpPromptInfo | None:
    """The prompt a `/server:name ...` line names, if any."""
    if manager is None or not text.startswith("/"):
        return None
    return manager.find_prompt(text[1:].split(maxsplit=1)[0])


def unknown_prompt(manager: McpManager | None, text: str) -> str | None:
    """Why `/server:name` names no prompt, when `server` is a server with prompts."""
    if manager is None or not text.startswith("/"):
        return None
    server, found, name = text[1:].split(maxsplit=1)[0].partition(":")
    names = [p.name for p in manager.prompts() if p.server == server]
    if not found or not names:
        return None
    return f"✗ MCP server {server!r} has no prompt {name!r} (it has: {', '.join(names)})"


async def prompt_message(
    manager: McpManager, prompt: McpPromptInfo, text: str, ask: AskLine
) -> str | None:
    """The prompt's text for the next turn, asking for missing required arguments (with the
    server's completions); None (said why on stderr) when it cannot be got."""
    try:
        args = parse_args(text.partition(" ")[2], prompt)
        for name, required, about in prompt.arguments:
            if args.get(name) or not required:
                continue
            options = await manager.complete_prompt(prompt, name, "", args)
            hint = f" ({about})" if about else ""
            if options:
                hint += " — e.g. " + ", ".join(options[:SUGGESTIONS_SHOWN])
            print(f"  {name}{hint}", file=sys.stderr)
            value = (await ask(f"  {name}> ")).strip()
            if value not in options:
                value = await shared.settle_value(
                    manager.complete_prompt, prompt, name, value, args
                )
            args[name] = value
        return await manager.get_prompt(prompt, args)
    except McpPromptError as exc:
        print(f"✗ {exc}", file=sys.stderr)
    except EOFError:
        print("✗ the prompt was not sent: no more input", file=sys.stderr)
    return None

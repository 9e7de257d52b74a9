"""The slash commands of `koroku chat` and their help, answered locally (never sent)."""

from __future__ import annotations

from koroku_desktop.app.runtime import McpManager
from koroku_desktop.cli import mcp_prompts

WELCOME = "Type /help for the commands, /exit (or Ctrl-D) to leave."

COMMANDS: tuple[tuple[str, str], ...] = (
    ("/help", "show this list"),
    ("/retry", "a new answer to your last message (the old one stays in the log)"),
    ("/edit <text>", "replace your last message and answer it again"),
    ("/attach PATH", "attach a file to your next message (`/attach clear` drops them)"),
    ("/prompts", "list the MCP servers' prompts (`/server:prompt arg=value` sends one)"),
    ("/clear", "start afresh (nothing is deleted)"),
    ("/exit", "leave (also `exit`, `quit` or Ctrl-D)"),
)


def command_names(manager: McpManager | None) -> list[str]:
    """Every slash command `koroku chat` knows, MCP prompts included (for completion)."""
    names = [usage.split()[0] for usage, _ in COMMANDS]
    prompts = manager.prompts() if manager is not None else []
    return names + [f"/{p.server}:{p.name}" for p in prompts]


def help_text(manager: McpManager | None) -> str:
    """What `/help` prints: the commands, then the MCP prompts if any server offers one."""
    width = max(len(usage) for usage, _ in COMMANDS)
    lines = [f"  {usage.ljust(width)}  {what}" for usage, what in COMMANDS]
    if manager is not None and manager.prompts():
        lines.append("MCP prompts:")
        lines += [f"  {line}" for line in mcp_prompts.list_text(manager).splitlines()]
    lines.append("Anything else is sent to Koroku as your message.")
    return "\n".join(lines)

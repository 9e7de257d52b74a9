"""The prompt of `koroku chat`: its slash commands and help (answered locally, never sent),
and the line reader: prompt_toolkit on a terminal, plain lines from a pipe."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.patch_stdout import patch_stdout

from koroku_desktop.agent.loop import Agent
from koroku_desktop.app.runtime import McpManager
from koroku_desktop.cli import mcp_prompts
from koroku_desktop.cli.keyboard import wait_readable

log = logging.getLogger(__name__)

READ_BYTES = 65_536
"""The most one read of a piped stdin takes (the rest waits in the pipe)."""
WELCOME = "Type /help for the commands, /exit (or Ctrl-D) to leave; Ctrl-C stops an answer."

COMMANDS: tuple[tuple[str, str], ...] = (
    ("/help", "show this list"),
    ("/retry", "a new answer to your last message (the old one stays in the log)"),
    ("/edit <text>", "replace your last message and answer it again"),
    ("/attach PATH", "attach a file to your next message (`/attach clear` drops them)"),
    ("/prompts", "list the MCP servers' prompts (`/server:prompt arg=value` sends one)"),
    ("/new [TITLE]", "start a new conversation (the model names it unless you do)"),
    ("/switch NAME|ID", "go to another conversation (an id prefix or its exact title)"),
    ("/conversations", "list the conversations (* marks this one)"),
    ("/clear", "start afresh (nothing is deleted)"),
    ("/exit", "leave (also `exit`, `quit`, Ctrl-D, or Ctrl-C on an empty prompt)"),
)


class LineReader(Protocol):
    """Where `koroku chat` reads the person's next message from."""

    async def read(self, prompt: str) -> str:
        """One message after showing `prompt` (EOFError at the end of input)."""
        ...


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


class PlainReader:
    """Lines from stdin (a pipe, a script, or the terminal when stdout is piped), read on the
    event loop as `input()` would give them: a Ctrl-C while it waits ends the wait at once
    (a thread blocked in `input()` held the process's exit until Enter was pressed)."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._ended = False

    async def read(self, prompt: str) -> str:
        """One line without its newline (EOFError at the end of input)."""
        sys.stdout.write(prompt)
        sys.stdout.flush()
        while b"\n" not in self._pending and not self._ended:
            chunk = await _chunk_of_stdin()
            self._pending += chunk
            self._ended = not chunk
        if not self._pending:
            raise EOFError
        line, _, rest = bytes(self._pending).partition(b"\n")
        self._pending = bytearray(rest)
        return line.removesuffix(b"\r").decode(errors="replace")


async def _chunk_of_stdin() -> bytes:
    """What stdin has once it is readable (b"" at its end, or with no stdin at all)."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return b""
    while True:
        await wait_readable(fd)
        try:
            return os.read(fd, READ_BYTES)
        except BlockingIOError:  # woken, then drained by someone else: wait again
            continue
        except OSError:
            return b""


class SlashCompleter(Completer):
    """Completes slash commands (MCP prompts included) and the path after `/attach `."""

    def __init__(self, manager: McpManager | None) -> None:
        self.manager = manager
        self.paths = PathCompleter(expanduser=True)

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        """Commands while the first word is typed; paths after `/attach `."""
        text = document.text_before_cursor
        if text.startswith("/attach "):
            rest = text.removeprefix("/attach ")
            yield from self.paths.get_completions(Document(rest, len(rest)), complete_event)
        elif text.startswith("/") and " " not in text and "\n" not in text:
            for name in command_names(self.manager):
                if name.startswith(text):
                    yield Completion(name, start_position=-len(text))


def _bindings() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("escape", "enter")  # Alt+Enter or Esc then Enter: a new line, not sending
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("c-c")  # Ctrl-C clears what is typed, as a shell does; on nothing, it leaves
    def _clear_or_leave(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    return keys


class TerminalReader:
    """The interactive prompt: history in the data dir, Alt+Enter for a new line, completion,
    and while it waits for you, other front ends' turns printed above it (`agent.catch_up()`
    every `FOLLOW_SECONDS`, its hooks print through `patch_stdout`)."""

    FOLLOW_SECONDS = 0.7

    def __init__(self, agent: Agent, manager: McpManager | None, history: Path) -> None:
        self.agent = agent
        self.session: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)),
            completer=SlashCompleter(manager),
            complete_while_typing=True,
            key_bindings=_bindings(),
        )

    async def read(self, prompt: str) -> str:
        """One message, possibly of several lines (EOFError on Ctrl-D)."""
        lead, _, prompt = prompt.rpartition("\n")
        if lead:
            print(lead)
        stop = asyncio.Event()
        with patch_stdout(raw=True):
            follow = asyncio.create_task(self._follow(stop))
            try:
                return await self.session.prompt_async(prompt)
            finally:
                stop.set()  # a catch-up under way finishes: nothing read is dropped
                await follow

    async def _follow(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), self.FOLLOW_SECONDS)
            except TimeoutError:
                try:
                    await self.agent.catch_up()
                except Exception:  # a busy or damaged log is tried again next time
                    log.info("catching up while idle failed", exc_info=True)


def line_reader(agent: Agent, manager: McpManager | None, history: Path) -> LineReader:
    """The prompt for a terminal, plain `input()` lines for a pipe or a script."""
    if sys.stdin.isatty() and sys.stdout.isatty():
        return TerminalReader(agent, manager, history)
    return PlainReader()

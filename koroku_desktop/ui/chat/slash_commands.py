"""MCP prompts as slash commands in the chat window's composer.

Typing `/` at the start of the message box lists the connected servers' prompts
(`/server:name` and what each does; there are no other slash commands in the app); Up and
Down move, Enter or Tab choose, Esc closes the list. A chosen prompt with arguments asks for
them in a bar above the box, completed through the server (the logic `koroku chat` uses,
from `prompt_commands`); a prompt typed whole (`/ev:args-prompt city=Oslo`) is sent at once
when nothing required is missing. The prompt's messages become the person's message.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent

from koroku_desktop.app.runtime import McpManager, McpPromptError, McpPromptInfo, prompt_commands
from koroku_desktop.ui.chat.prompt_bar import PromptArgsBar, SlashList
from koroku_desktop.ui.chat.window import ChatWindow

_TYPING = re.compile(r"/(\S*)")


class SlashCommands(QObject):
    """Offers `manager`'s prompts under a typed `/` in `window`'s composer and sends them."""

    def __init__(self, manager: McpManager, window: ChatWindow) -> None:
        super().__init__(window)
        self.manager = manager
        self.window = window
        self.list = SlashList()
        self.bar = PromptArgsBar()
        window.composer.add_above_input(self.list)
        window.composer.add_above_input(self.bar)
        self._tasks: set[asyncio.Task[Any]] = set()
        window.input.textChanged.connect(self._typed)
        window.input.installEventFilter(self)
        window.slash_command = self.run_typed
        self.bar.send_requested.connect(self.send)
        self.bar.cancelled.connect(self.cancel)
        self.bar.edited.connect(self._complete)

    # -- the list under a typed "/" ------------------------------------------------------

    def _typed(self) -> None:
        match = _TYPING.fullmatch(self.window.input.toPlainText())
        prompts = self.manager.prompts() if match else []
        if match:
            typed = match.group(1).casefold()
            prompts = [p for p in prompts if f"{p.server}:{p.name}".casefold().startswith(typed)
                       or p.name.casefold().startswith(typed)]  # fmt: skip
        self.list.show_prompts(prompts)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """While the list shows: Up/Down move, Enter/Tab choose, Esc closes it."""
        if not (isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress):
            return False
        if not self.list.isVisible():
            return False
        key = event.key()
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            self.list.step(-1 if key == Qt.Key.Key_Up else 1)
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab):
            prompt = self.list.chosen()
            if prompt is not None:
                self.choose(prompt)
                return True
        if key == Qt.Key.Key_Escape:
            self.list.setVisible(False)
            return True
        return False

    def choose(self, prompt: McpPromptInfo) -> None:
        """Take `prompt` from the list: ask for its arguments, or send it when it has none."""
        self.list.setVisible(False)
        self.window.input.clear()
        if prompt.arguments:
            self.bar.ask(prompt, {})
        else:
            self.send(prompt, {})

    # -- a command typed whole --------------------------------------------------------------

    def run_typed(self, text: str) -> bool:
        """Handle a sent `/server:name args` (True), or leave other text to be sent (False)."""
        if not text.startswith("/"):
            return False
        head, _, rest = text[1:].partition(" ")
        prompt = self.manager.find_prompt(head)
        if prompt is None:
            return False
        try:
            args = prompt_commands.parse_args(rest, prompt)
        except McpPromptError as exc:
            self.window.show_hint(f"✗ {exc}")
            self.window.input.setPlainText(text)
            return True
        if prompt_commands.missing(prompt, args):
            self.bar.ask(prompt, args)
        else:
            self.send(prompt, args)
        return True

    # -- the arguments bar -----------------------------------------------------------------

    def _complete(self, name: str, text: str) -> None:
        prompt = self.bar.prompt
        if prompt is None:
            return
        known = {k: v for k, v in self.bar.values().items() if k != name}

        async def ask() -> None:
            options = await self.manager.complete_prompt(prompt, name, text, known)
            if self.bar.prompt is prompt:
                self.bar.offer(name, options)

        self._keep(ask())

    def cancel(self) -> None:
        """Esc in the bar: forget the command, back to the message box."""
        self.bar.clear()
        self.window.refocus_input()

    def send(self, prompt: McpPromptInfo, args: dict[str, str]) -> None:
        """Get the prompt from its server and send its messages as the person's message."""
        self.bar.setEnabled(False)
        self.window.show_hint(f"Getting {prompt_commands.command(prompt)} from {prompt.server}…")

        async def get() -> None:
            try:
                settled = {
                    name: await prompt_commands.settle_value(
                        self.manager.complete_prompt, prompt, name, value, args
                    )
                    for name, value in args.items()
                }
                text = await self.manager.get_prompt(prompt, settled)
            except McpPromptError as exc:
                self.window.hide_hint()
                self.window.show_hint(f"✗ {exc}")
                return
            finally:
                self.bar.setEnabled(True)
            self.bar.clear()
            self.window.hide_hint()
            self.window.submit(text)
            self.window.refocus_input()

        self._keep(get())

    def _keep(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

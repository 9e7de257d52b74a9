"""Naming a new conversation after its first exchange, in the background, through the model.

After a turn that answered, a conversation Koroku started and nobody has named yet gets a
short title from the model (one small request, no tools, no history beyond the first
exchange). A failure is logged and leaves `New conversation`: the next turn tries again. A
person's rename always wins (domain/conversations.py ignores a model title after it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from koroku_desktop.agent.conversations import ConversationBook, needs_title
from koroku_desktop.agent.hooks import TurnResult
from koroku_desktop.agent.ports import ChatModel
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.model_io import ModelError, ModelRequest
from koroku_desktop.domain.parts import TextPart, visible_text

log = logging.getLogger(__name__)

TITLE_INSTRUCTION = (
    "You name conversations. Give the conversation below a short title of at most six "
    "words, in the language it is written in. Answer with the title alone: no quotes, "
    "no full stop at the end."
)
EXCHANGE_CHARS = 2_000
"""At most this much of the first message and of the first answer goes to the model."""
TITLE_CHARS = 80
"""A model's title is cut to this many characters."""


def title_prompt(question: str, answer: str) -> str:
    """The one message the titler sends: the first exchange, cut short."""
    return f"User: {question[:EXCHANGE_CHARS]}\n\nAssistant: {answer[:EXCHANGE_CHARS]}"


def tidy_title(text: str) -> str:
    """The model's answer as a title: its first line, quotes and a final full stop gone,
    cut to `TITLE_CHARS` ('' when nothing is left)."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = line.strip().strip("\"'“”«»*#").strip().removeprefix("Title:").strip()
    line = line.rstrip(".").strip()
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def first_exchange(view: ContextView) -> tuple[str, str] | None:
    """The first user text and the first answer's text in the live context (None: no
    answered exchange yet)."""
    question = answer = ""
    for event in view.message_events():
        text = visible_text(event.parts).strip()
        if not text:
            continue
        if event.role == "user" and not question:
            question = text
        elif event.role == "model" and question:
            answer = text
            break
    return (question, answer) if question and answer else None


class Titler:
    """Names conversations in the background after their first exchange (see the module)."""

    def __init__(
        self, book: ConversationBook, model: ChatModel, model_name: Callable[[], str]
    ) -> None:
        self.book = book
        self.model = model
        self.model_name = model_name
        self.task: asyncio.Task[str | None] | None = None
        self.last_problem: str | None = None

    def after_turn(self, conversation_id: str, view: ContextView, result: TurnResult) -> None:
        """Start naming `conversation_id` if it needs a title (never twice at once)."""
        if not result.ok or (self.task is not None and not self.task.done()):
            return
        exchange = first_exchange(view)
        if exchange is None:
            return
        self.task = asyncio.ensure_future(self.name(conversation_id, *exchange))

    async def name(self, conversation_id: str, question: str, answer: str) -> str | None:
        """Ask the model for a title and record it; the title, or None (not needed, or a
        failure: logged, tried again after the next turn)."""
        try:
            found = await asyncio.to_thread(self.book.get, conversation_id)
            if found is None or not needs_title(found):
                return None
            request = ModelRequest(
                model=self.model_name(),
                system_instruction=TITLE_INSTRUCTION,
                contents=[
                    MessageEvent(role="user", parts=[TextPart(text=title_prompt(question, answer))])
                ],
            )
            reply = await self.model.generate(request)
            title = tidy_title(visible_text(reply.parts))
            if not title:
                self.last_problem = "could not name the conversation: the model gave no title"
                return None
            await asyncio.to_thread(self.book.name, conversation_id, title)
        except (ModelError, RefusedError, OSError) as exc:
            self.last_problem = f"could not name the conversation: {exc}"
            log.info(self.last_problem)
            return None
        except Exception as exc:  # a title is a nicety: it never breaks a turn
            self.last_problem = f"could not name the conversation: {exc}"
            log.warning(self.last_problem, exc_info=True)
            return None
        self.last_problem = None
        return title

    async def settle(self) -> None:
        """Wait for a title being asked for (a terminal command before it exits)."""
        if self.task is not None:
            await asyncio.wait([self.task])

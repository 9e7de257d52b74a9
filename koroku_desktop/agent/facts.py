"""The facts about the user, kept up with the log: read, stated, edited and forgotten.

Facts are derived from the log only (domain/facts.py folds them), so every process sees the
same ones: `FactBook.refresh` reads the `fact` events written since it last looked (by any
process, or pulled from the sync hub) and folds them again. Writing one is appending a
`fact` event; nothing is ever updated or deleted. The agent refreshes the book when it
takes a turn (agent/loop.py), so a fact added by `koroku memory add` in another process
goes with the next request.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from koroku_desktop.agent.ports import EventLog
from koroku_desktop.agent.turn import Journal
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.events import FactCategory, FactEvent, StoredEvent
from koroku_desktop.domain.facts import (
    CATEGORIES,
    Fact,
    FactRefused,
    checked_fact,
    facts_block,
    live_facts,
    subject_key,
)
from koroku_desktop.domain.json_value import JsonObject
from koroku_desktop.tools.base import RememberFact

log = logging.getLogger(__name__)

PAGE = 2_000


class UnknownFact(RefusedError, LookupError):
    """No live fact has that id (it was edited or forgotten meanwhile, or never existed)."""


@dataclass(frozen=True)
class Stated:
    """What writing a fact did: the stored event, and the live fact it replaced (if any)."""

    stored: StoredEvent
    replaced: Fact | None


class FactBook:
    """The live facts of the conversations in `conversations`, folded from the log
    (`None` among them: every conversation; the facts about the user span them all).

    Thread-safe: `refresh` and the writers are blocking (run them off the event loop).
    """

    def __init__(self, log: EventLog, conversations: Sequence[str | None] = (None,)) -> None:
        self.log = log
        self.conversations = tuple(conversations)
        self._events: list[StoredEvent] = []
        self._after: dict[str | None, int] = {}
        self._facts: list[Fact] = []
        self._lock = threading.Lock()

    @property
    def facts(self) -> list[Fact]:
        """The live facts as last refreshed, in their stable order."""
        with self._lock:
            return list(self._facts)

    def refresh(self) -> bool:
        """Read the fact events written since the last look; True when any were new."""
        with self._lock:
            new: list[StoredEvent] = []
            for conversation in self.conversations:
                while True:
                    page = self.log.entries(
                        conversation,
                        after_seq=self._after.get(conversation, 0),
                        limit=PAGE,
                        kinds=("fact",),
                    )
                    if page:
                        self._after[conversation] = page[-1].seq
                    new.extend(e for e in page if isinstance(e, StoredEvent))
                    if len(page) < PAGE:
                        break
            if new:
                self._events.extend(new)
                self._facts = live_facts(self._events)
            return bool(new)

    async def block(self) -> str:
        """Read what was stated since the last look (off the loop) and return the facts'
        block for the request; a failed read keeps the facts known so far."""
        try:
            await asyncio.to_thread(self.refresh)
        except Exception:  # facts are a help: a read failing must not stop the turn
            log.warning("could not read the facts about the user", exc_info=True)
        return facts_block(self.facts)

    def find(self, ref: str | int) -> Fact:
        """The live fact with this id: its seq here (`12` or `#12`) or its event id;
        `UnknownFact` when there is none (after a refresh)."""
        self.refresh()
        text = str(ref).strip().removeprefix("#")
        for fact in self.facts:
            if text in (str(fact.seq), fact.event_id):
                return fact
        raise UnknownFact(
            f"no fact has the id {ref}: it was edited or forgotten meanwhile, or never existed "
            "(an edited fact gets a new id; `koroku memory list` shows them)"
        )

    def current(self, subject: str) -> Fact | None:
        """The live fact on `subject` (case and spaces ignored), if any."""
        key = subject_key(subject)
        return next((f for f in self.facts if f.key == key), None)

    def draft(
        self,
        subject: str,
        text: str,
        category: FactCategory = "about_you",
        *,
        source: Literal["person", "model"] = "person",
        from_seqs: Sequence[int] = (),
        from_ids: Sequence[str] = (),
    ) -> tuple[FactEvent, Fact | None]:
        """The event stating a fact (checked: `FactRefused` when empty or too long) and the
        live fact it will replace."""
        subject, text = checked_fact(subject, text)
        self.refresh()
        replaced = self.current(subject)
        event = FactEvent(
            subject=subject,
            text=text,
            category=category,
            source=source,
            from_seqs=list(from_seqs),
            from_ids=list(from_ids),
            replaces_id=replaced.event_id if replaced is not None else None,
        )
        return event, replaced

    def remember(
        self, conversation_id: str, subject: str, text: str, category: FactCategory = "about_you"
    ) -> Stated:
        """Store a fact the person stated (`koroku memory add`, Settings)."""
        event, replaced = self.draft(subject, text, category)
        return self._write(conversation_id, event, replaced)

    def edit(self, ref: str | int, text: str) -> Stated:
        """Replace the text of the live fact `ref` (same subject and category): a new fact
        event that supersedes it."""
        fact = self.find(ref)
        subject, text = checked_fact(fact.subject, text)
        event = FactEvent(
            subject=subject,
            text=text,
            category=fact.category,
            source="person",
            from_seqs=[fact.seq],
            from_ids=[fact.event_id],
            replaces_id=fact.event_id,
        )
        return self._write(fact.conversation_id, event, fact)

    def forget(self, ref: str | int) -> Stated:
        """Take the live fact `ref` out of what Koroku knows (it stays in the log)."""
        fact = self.find(ref)
        event = FactEvent(
            subject=fact.subject,
            category=fact.category,
            op="forget",
            source="person",
            from_seqs=[fact.seq],
            from_ids=[fact.event_id],
            replaces_id=fact.event_id,
        )
        return self._write(fact.conversation_id, event, fact)

    def _write(self, conversation_id: str, event: FactEvent, replaced: Fact | None) -> Stated:
        (stored,) = self.log.append(conversation_id, [event])
        self.refresh()
        return Stated(stored, replaced)


def tool_writer(book: FactBook, journal: Journal) -> RememberFact:
    """The `remember` tool's writer: a fact the model stores in the running turn, naming
    the user message it came from, appended through the turn (so every view folds it)."""

    async def remember(subject: str, text: str, category: Any) -> JsonObject:
        kind: FactCategory = category if category in CATEGORIES else "about_you"
        said = journal.view.last_user_seq()
        ids = [m.event_id for m in journal.view.messages if m.seq == said and m.event_id]
        try:
            event, replaced = await asyncio.to_thread(
                book.draft,
                subject,
                text,
                kind,
                source="model",
                from_seqs=[said] if said is not None else [],
                from_ids=ids,
            )
        except FactRefused as exc:
            return {"error": f"not stored: {exc}"}
        (stored,) = await journal.append([event])
        await asyncio.to_thread(book.refresh)
        answer: JsonObject = {
            "stored": f"{event.subject}: {event.text}",
            "category": event.category,
            "id": stored.seq,
        }
        if replaced is not None:
            answer["replaced"] = f"{replaced.subject}: {replaced.text}"
        return answer

    return remember

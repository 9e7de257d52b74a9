"""MemorySurfacer: before a turn, the few past passages close in meaning to the new message.

It embeds the person's message (one RETRIEVAL_QUERY call), looks for events whose vectors
are at least `threshold` similar, leaves out what the model already sees (the live context)
and the running turn, and returns at most `limit` passages to attach to the turn. Anything
going wrong (no key, no network, a slow service) means no passages: a turn never waits more
than `timeout_s` for memories, and never fails because of them.

A passage the person dismissed (a `remembered_dismissed` event) is never surfaced again in
that conversation, whatever clears or compactions came since; other conversations may still
surface it, and search and the `recall` tool still find it. The rule reads the log, so it
holds across restarts and for every process on the same data dir.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from koroku_desktop.agent.conversations import title_of
from koroku_desktop.agent.ports import LogReader
from koroku_desktop.agent.recall import HybridSearch
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import RememberedDismissedEvent, StoredEvent
from koroku_desktop.domain.model_io import ModelError
from koroku_desktop.domain.recall import EMBEDDED_KINDS
from koroku_desktop.domain.remembered import Remembered

log = logging.getLogger(__name__)

THRESHOLD = 0.75
"""Cosine similarity a passage needs to surface unasked (search results need less)."""


DISMISSED_PAGE = 10_000


def dismissed_passages(
    log: LogReader,
    conversation_id: str,
    seqs_of_events: Callable[[list[str]], dict[str, int]] | None = None,
) -> set[int]:
    """The local seqs of passages dismissed in this conversation (read from the log: a
    blocking call, run it off the event loop).

    A dismissal names the passage by its global event id too; with `seqs_of_events` that id
    is what counts (seqs are local: a dismissal made on another device, merged into this
    log, names the passage by its seq there). Without an id, the dismissal's seq counts.
    """
    by_seq: set[int] = set()
    by_id: list[str] = []
    after = 0
    while True:
        page = log.entries(
            conversation_id, after_seq=after, limit=DISMISSED_PAGE, kinds=["remembered_dismissed"]
        )
        for entry in page:
            if isinstance(entry, StoredEvent) and isinstance(entry.event, RememberedDismissedEvent):
                event = entry.event
                if event.passage_event_id and seqs_of_events is not None:
                    by_id.append(event.passage_event_id)
                else:
                    by_seq.add(event.passage_seq)
        if len(page) < DISMISSED_PAGE:
            break
        after = page[-1].seq
    if by_id and seqs_of_events is not None:
        by_seq.update(seqs_of_events(by_id).values())
    return by_seq


def live_seqs(view: ContextView) -> set[int]:
    """The seqs of what the model sees now: the kept messages and the summary (if any), and
    the turns just replaced by a regenerate or an edit (taken back, not to be surfaced)."""
    return {m.seq for m in view.messages} | {view.boundary_seq} | view.replaced_seqs


@dataclass
class MemorySurfacer:
    """Finds past passages worth remembering with a new message."""

    search: HybridSearch
    threshold: float = THRESHOLD
    limit: int = 3
    timeout_s: float = 3.0
    titles: Callable[[], dict[str, str]] | None = None
    """The conversations' titles (blocking; agent/conversations.py `read_titles`): once
    there are several, each passage says which conversation it comes from."""

    async def for_turn(
        self,
        text: str,
        view: ContextView,
        below_seq: int | None,
        dismissed: set[int] | frozenset[int] = frozenset(),
    ) -> list[Remembered]:
        """Passages for a new turn in `view`: what the live context holds, and what was
        `dismissed` (passage seqs), is left out."""
        return await self.recall_for(text, below_seq, live_seqs(view) | set(dismissed))

    async def for_new_turn(
        self, log_: LogReader, conversation_id: str, text: str, view: ContextView
    ) -> list[Remembered]:
        """Passages for a turn about to start in `view` (nothing of it is stored yet): the
        dismissed ones are read from the log off the loop and left out. A log that holds no
        passage yet (a new data dir's first turn) costs no embedding request."""
        dismissed = await asyncio.to_thread(self._dismissed_if_any, log_, conversation_id)
        if dismissed is None:
            return []
        return await self.for_turn(text, view, None, dismissed)

    def _dismissed_if_any(self, log_: LogReader, conversation_id: str) -> set[int] | None:
        """The dismissed passages' seqs, or None when no event of the log could be one."""
        if not log_.entries(None, limit=1, kinds=EMBEDDED_KINDS):
            return None
        return dismissed_passages(log_, conversation_id, self.search.store.seqs_of_events)

    async def recall_for(
        self, text: str, below_seq: int | None, live_seqs: set[int]
    ) -> list[Remembered]:
        """Passages related to `text`, best first (empty when none, or on any failure).

        The embedder's client is built before the clock starts: `timeout_s` bounds the
        service's answer, not a cold process importing the SDK (seconds on a busy machine)."""
        connect = getattr(self.search.embedder, "connect", None)
        try:
            if connect is not None:
                connect()
            vector = await asyncio.wait_for(self.search.query_vector(text), self.timeout_s)
        except (ModelError, LookupError, TimeoutError) as exc:
            log.info("no memories surfaced: %s", exc)
            return []
        try:
            return await self.passages(vector, below_seq, live_seqs)
        except ModelError as exc:  # e.g. a vector of the wrong size from the service
            log.info("no memories surfaced: %s", exc)
            return []

    async def passages(
        self, vector: list[float], below_seq: int | None, live_seqs: set[int]
    ) -> list[Remembered]:
        """The surfacing after the embedding call: nearest events, filtered, as passages."""
        matches = await self.search.nearest(vector, self.limit + len(live_seqs), below_seq)
        chosen = [m for m in matches if m.similarity >= self.threshold and m.seq not in live_seqs][
            : self.limit
        ]
        if not chosen:
            return []
        hits = await asyncio.to_thread(self.search.store.hits, [m.seq for m in chosen])
        titles = await asyncio.to_thread(self.titles) if self.titles is not None else {}
        found = []
        for match in chosen:
            hit = hits.get(match.seq)
            if hit is None or not hit.snippet:
                continue
            when = datetime.fromtimestamp(hit.created_at).strftime("%Y-%m-%d %H:%M")
            who = "summary" if hit.kind == "compaction" else hit.role or hit.kind
            if titles:  # several conversations: say which one (no brackets: see _LINE)
                title = title_of(titles, hit.conversation_id)
                who += " in " + title.replace("(", "").replace(")", "")
            found.append(Remembered(hit.seq, when, who, hit.snippet))
        return found

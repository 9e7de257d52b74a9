"""Bringing one conversation's Koroku export into a log that has events of its own.

A whole-log export is imported into an empty log, every event at its original seq
(portable.py). An export of one conversation (`koroku export -c`, or the viewer's Export…
of the conversation it shows) is merged instead: each event keeps its id, conversation, turn,
writer and time and takes the next seq here (`SqliteEventLog.merge`, idempotent on the event
id), so the conversation arrives with its title and origin (its `conversation` events travel
with it), importing it again adds nothing, and a newer export of it adds only what is new.
Everything goes in in one transaction: a cancel, a damaged file or a crash leaves none of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.domain.ids import legacy_id
from koroku_desktop.domain.upcasting import upcast
from koroku_desktop.maintenance.portable import ExportContents
from koroku_desktop.store import SqliteEventLog

PROGRESS_EVERY = 500
"""Records read between two progress calls."""


class ImportCancelled(KorokuError, RuntimeError):
    """The person stopped the import; nothing of the conversation being written was kept."""


@dataclass(frozen=True)
class MergedImport:
    """What a merge wrote: events new here, events already here, damaged records left out,
    and the conversations the export holds (oldest first)."""

    imported: int
    known: int
    damaged: int
    conversations: tuple[str, ...]


Progress = Callable[[int, int], None]
"""Called with how many records were read of how many."""


def stored_event(record: dict[str, Any]) -> StoredEvent | None:
    """The event an export record holds, with its identity (None: a damaged record, or one
    no event matches). A record from before ids existed gets an id from its content, the
    same at every import of the file."""
    if record.get("damaged"):
        return None
    payload = record["payload"]
    try:
        event = upcast(record["kind"], payload)
    except Exception:  # noqa: BLE001 — any shape no event has: left out like a damaged row
        return None
    created_at = float(record["created_at"])
    event_id = record.get("event_id")
    if not isinstance(event_id, str) or not event_id:
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        event_id = legacy_id(created_at, record["conversation_id"], record["seq"], text)
    turn_id = record.get("turn_id")
    writer = record.get("writer")
    return StoredEvent(
        0,
        record["conversation_id"],
        created_at,
        event,
        event_id,
        turn_id if isinstance(turn_id, str) and turn_id else event_id,
        writer if isinstance(writer, str) and writer else "import",
    )


def merge_export(
    log: SqliteEventLog,
    contents: ExportContents,
    blobs: BlobStore | None = None,
    *,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> MergedImport:
    """Merge the export's events into `log` in one transaction (see the module doc); its
    attached files go into `blobs` first. Raises `ImportCancelled` (nothing written) when
    `cancelled` says so before the write begins."""
    stop = cancelled or (lambda: False)
    records = contents.records
    events: list[StoredEvent] = []
    for n, record in enumerate(records, start=1):
        stored = stored_event(record)
        if stored is not None:
            events.append(stored)
        if n % PROGRESS_EVERY == 0:
            if stop():
                raise ImportCancelled("import stopped; nothing was imported")
            if progress is not None:
                progress(n, len(records))
    if stop():
        raise ImportCancelled("import stopped; nothing was imported")
    if blobs is not None:
        for content in contents.blobs.values():
            blobs.put(content)
    with log.batch():
        added = log.merge(events)
    log.index.flush()
    if progress is not None:
        progress(len(records), len(records))
    return MergedImport(
        imported=len(added),
        known=len(events) - len(added),
        damaged=len(records) - len(events),
        conversations=tuple(dict.fromkeys(e.conversation_id for e in events)),
    )

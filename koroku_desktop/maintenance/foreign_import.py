"""Other assistants' history (ChatGPT's and Claude's data exports) brought into the one log.

Each exporter (chatgpt_export.py, claude_export.py) reads its file incrementally and yields
`ForeignChat`s: plain user/model text, files, and the turns a branch replaced. This module
turns one chat into events and writes them in one transaction per chat:

- a `created` conversation event (the original title and time, `origin` chatgpt/claude), the
  messages (`origin="import"`, each at its original time), a `superseded` event after every
  message of a branch the exporter's current branch replaced, then an `imported` marker last
  (which keeps the chat read-only until the person continues it);
- every event id is derived from the export's own ids (`legacy_id`), and the events are
  merged on it (`SqliteEventLog.merge`), so importing the same export again adds nothing and
  a newer export adds only what is new. A chat is written whole or not at all: Ctrl-C or a
  crash leaves no half-imported conversation.

What Gemini sees of an imported chat is what is stored: user and model text (a tool's output
or a code cell as text in a model message), never another assistant's tool scaffolding.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.domain.conversations import clean_title, origin_name
from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.domain.events import (
    ConversationEvent,
    Event,
    MessageEvent,
    Role,
    StoredEvent,
    SupersededEvent,
)
from koroku_desktop.domain.ids import legacy_id
from koroku_desktop.domain.parts import AttachmentPart, Part, TextPart
from koroku_desktop.store import SqliteEventLog

Source = Literal["chatgpt", "claude"]
_NAMESPACE = uuid.UUID("5b0f3c1e-7d2a-4c36-9a51-0d6f4b7e2c81")
FALLBACK_TITLE = {"chatgpt": "ChatGPT conversation", "claude": "Claude conversation"}


class ForeignFormatError(KorokuError, ValueError):
    """The file is damaged, or not an export Koroku can read: nothing was imported."""


@dataclass(frozen=True, slots=True)
class ForeignFile:
    """A file a message carried: its bytes when the export holds them, else only its name."""

    name: str
    mime_type: str
    data: bytes | None = None


@dataclass(frozen=True, slots=True)
class ForeignMessage:
    """One message of a chat as plain history: who said it, the text, the files.

    `export_id` is the export's own id for it (what makes an import idempotent);
    `replaced_by` is set on a message of a branch that is not the chat's current one: the
    export id of the message that replaced that branch (it is imported as a superseded turn).
    """

    export_id: str
    role: Role
    text: str
    created_at: float | None = None
    files: tuple[ForeignFile, ...] = ()
    replaced_by: str | None = None


@dataclass(frozen=True, slots=True)
class ForeignChat:
    """One chat of an export: its id there, title, creation time and messages in order."""

    source: Source
    export_id: str
    title: str | None
    created_at: float | None
    messages: list[ForeignMessage] = field(default_factory=list)


@dataclass
class ForeignReport:
    """What an import did: chats seen and newly written, messages written, files stored,
    files the export only names (shown as missing)."""

    source: Source
    chats: int = 0
    new_chats: int = 0
    updated_chats: int = 0
    messages: int = 0
    files: int = 0
    missing_files: int = 0
    last_conversation: str | None = None
    """The id of the last chat that was imported or already there (None: none yet)."""


Progress = Callable[[int, ForeignReport], None]
"""Called after each chat with how many chats were done, and the report so far."""


def conversation_id_of(source: Source, export_id: str) -> str:
    """The conversation id a chat gets: the same for every import of it (a UUID v5)."""
    return str(uuid.uuid5(_NAMESPACE, f"{source}:{export_id}"))


def missing_note(file: ForeignFile) -> str:
    """How a file the export only names is shown in its message."""
    return f"[attachment not in the export: {file.name or 'unnamed file'}]"


def _parts(message: ForeignMessage, blobs: BlobStore | None) -> tuple[list[Part], int, int]:
    """The message's parts, and how many files were stored and how many are missing."""
    parts: list[Part] = []
    notes: list[str] = []
    for file in message.files:
        if file.data is None or blobs is None:
            notes.append(missing_note(file))
            continue
        sha = blobs.put(file.data)
        parts.append(
            AttachmentPart(
                sha256=sha, mime_type=file.mime_type, name=file.name, size=len(file.data)
            )
        )
    text = "\n".join(t for t in [message.text.strip(), *notes] if t)
    if text:
        parts.insert(0, TextPart(text=text))
    return parts, len(parts) - (1 if text else 0), len(notes)


def chat_events(chat: ForeignChat, import_time: float) -> list[StoredEvent]:
    """The events of one chat, with ids derived from the export's ids (no blobs: files are
    left as their names; `write_chat` stores them). Times the export lacks are the previous
    message's (the chat's own, or `import_time`, for the first)."""
    return _events(chat, import_time, None, {})


def _events(
    chat: ForeignChat,
    import_time: float,
    blobs: BlobStore | None,
    files: dict[str, tuple[int, int]],
) -> list[StoredEvent]:
    cid = conversation_id_of(chat.source, chat.export_id)
    stable = id_time_of(chat)
    started = chat.created_at or next((m.created_at for m in chat.messages if m.created_at), None)
    started = import_time if started is None else started
    writer = f"import@{chat.source}"
    key = (chat.source, chat.export_id)

    def stored(event: Event, at: float, *material: str, turn: str | None = None) -> StoredEvent:
        event_id = legacy_id(stable, *key, *material)  # never the import's own time
        return StoredEvent(0, cid, at, event, event_id, turn or event_id, writer)

    title = _title(chat)
    out = [stored(_created(chat, title), started, "created")]
    clock = started
    ids = {m.export_id: legacy_id(m.created_at or 0.0, *key, m.export_id) for m in chat.messages}
    replaced: list[StoredEvent] = []  # a branch's `superseded` events go in after it whole
    for message in chat.messages:
        clock = message.created_at if message.created_at is not None else clock
        parts, stored_files, missing = _parts(message, blobs)
        if not parts:
            continue
        if message.replaced_by is None:
            out.extend(replaced)
            replaced.clear()
        event = MessageEvent(role=message.role, parts=parts, origin="import")
        event_id = ids[message.export_id]
        files[event_id] = (stored_files, missing)
        out.append(StoredEvent(0, cid, clock, event, event_id, event_id, writer))
        if message.replaced_by is not None:
            gone = SupersededEvent(
                superseded_turn_id=event_id,
                reason="edit" if message.role == "user" else "regenerate",
            )
            by = ids.get(message.replaced_by) or legacy_id(0.0, *key, message.replaced_by)
            replaced.append(stored(gone, clock, "superseded", message.export_id, turn=by))
    out.extend(replaced)
    return out


def id_time_of(chat: ForeignChat) -> float:
    """The time in the ids of a chat's own events (created, superseded, imported): one the
    export gives, so every import of it makes the same ids (0 when it gives none)."""
    return chat.created_at or next((m.created_at for m in chat.messages if m.created_at), 0.0)


def _title(chat: ForeignChat) -> str:
    for candidate in (chat.title, *(m.text for m in chat.messages if m.role == "user")):
        if candidate and candidate.strip():
            text = " ".join(candidate.split())
            return clean_title(text if len(text) <= 80 else text[:79].rstrip() + "…")
    return FALLBACK_TITLE[chat.source]


def _created(chat: ForeignChat, title: str) -> ConversationEvent:
    return ConversationEvent(action="created", title=title, origin=chat.source)


def write_chat(
    log: SqliteEventLog,
    chat: ForeignChat,
    import_time: float,
    blobs: BlobStore | None,
    report: ForeignReport,
) -> int:
    """Write what the log lacks of one chat in one transaction, the `imported` marker last;
    return how many messages were new (0: the chat was already all there)."""
    files: dict[str, tuple[int, int]] = {}
    events = _events(chat, import_time, blobs, files)
    with log.batch():
        added = log.merge(events)
        new_messages = sum(1 for s in added if isinstance(s.event, MessageEvent))
        if added:
            last = events[-1]
            marker = ConversationEvent(action="imported", title=None, origin=chat.source)
            material = (chat.source, chat.export_id, "imported", last.event_id)
            marker_id = legacy_id(id_time_of(chat), *material)
            log.merge(
                [
                    StoredEvent(
                        0,
                        last.conversation_id,
                        last.created_at,
                        marker,
                        marker_id,
                        marker_id,
                        last.writer,
                    )
                ]
            )
    report.chats += 1
    report.last_conversation = events[0].conversation_id
    if added and any(isinstance(s.event, ConversationEvent) for s in added):
        report.new_chats += 1
    elif added:
        report.updated_chats += 1
    report.messages += new_messages
    for stored in added:
        counted = files.get(stored.event_id, (0, 0))
        report.files += counted[0]
        report.missing_files += counted[1]
    return new_messages


def import_chats(
    log: SqliteEventLog,
    chats: Iterable[ForeignChat],
    source: Source,
    *,
    import_time: float,
    blobs: BlobStore | None = None,
    progress: Progress | None = None,
) -> ForeignReport:
    """Write every chat (each whole, in its own transaction), reporting progress after each."""
    report = ForeignReport(source)
    for n, chat in enumerate(chats, start=1):
        write_chat(log, chat, import_time, blobs, report)
        if progress is not None:
            progress(n, report)
    log.index.flush()
    return report


def summary(report: ForeignReport) -> str:
    """One line saying what an import did."""
    name = origin_name(report.source)
    missing = report.missing_files
    named = f", {missing} named only (shown as missing)" if missing else ""
    return (
        f"imported {report.messages} message(s) from {name}: {report.new_chats} new "
        f"conversation(s), {report.updated_chats} updated, "
        f"{report.chats - report.new_chats - report.updated_chats} already here; "
        f"{report.files} file(s){named}"
    )

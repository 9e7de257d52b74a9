"""Koroku's own JSON export of the log, and importing it back event for event.

An export is one JSON object: a header (`format`, `version`, `scope`, `exported_at`) written
first, so a file can be recognised from its first bytes, then `events`, each with its seq,
conversation, created_at, kind, schema_version and payload. Importing needs an empty log and
writes every event with its original seq and created_at in one transaction, indexing its text
for search as `append` does, so the conversation carries on exactly where it was.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from koroku_desktop.blobs.blob_store import BlobStore, MissingBlob, sha256_of
from koroku_desktop.domain.errors import RefusedError
from koroku_desktop.domain.events import (
    SCHEMA_VERSION,
    DamagedEvent,
    LogEntry,
    MessageEvent,
    dump_event,
)
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.domain.projection import Fix, log_fixes
from koroku_desktop.domain.upcasting import upcast
from koroku_desktop.maintenance.export_checks import ExportFormatError as ExportFormatError
from koroku_desktop.maintenance.export_checks import check_record, load_export_json, strict_json
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.log.order import entry_key
from koroku_desktop.store.search.searchable import searchable_text

EXPORT_FORMAT = "koroku-export"
EXPORT_VERSION = 1
HEADER_PROBE_BYTES = 4096
_HEADER = re.compile(rb'^\s*\{\s*"format"\s*:\s*"koroku-export"')
_INSERT = (
    "INSERT INTO events (seq, conversation_id, kind, schema_version, payload, created_at,"
    " event_id, turn_id, writer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_PAGE = 2000
SQLITE_MAGIC = b"SQLite format 3\x00"
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
)
ImportFormat = Literal["export", "sqlite", "unknown"]

Scope = Literal["all", "live", "conversation"]
"""What an export holds: the whole log, one conversation's live context, or one conversation
(whose import merges into a log that has events: see portable_merge.py)."""


class LogNotEmptyError(RefusedError, RuntimeError):
    """An export can only be imported into an empty log."""


@dataclass(frozen=True)
class PortableImport:
    """What an import wrote: how many events, and the seq range."""

    imported: int
    first_seq: int
    last_seq: int
    repairs: list[Fix] = field(default_factory=list)
    """Call/response problems the projection repairs in every request (the log keeps them)."""


# -- export ---------------------------------------------------------------------------------


def exported_entries(
    log: SqliteEventLog, conversation_id: str | None = None, *, live: bool = False
) -> Iterator[LogEntry]:
    """Every entry oldest first in the one order (all conversations when None), or only the
    live context: synced events in the hub's order, then this device's unpushed ones, so two
    devices export one history alike (store/order.py).

    The live context is the latest boundary (compaction/clear) and the events after it that
    the model still sees; it needs a `conversation_id`.
    """
    if live:
        if conversation_id is None:
            raise ValueError("a live export needs a conversation id")
        loaded = log.load_live(conversation_id)
        items: list[LogEntry] = [*loaded.events, *loaded.damaged]
        if loaded.boundary is not None:
            items.append(loaded.boundary)
        yield from sorted(items, key=entry_key)
        return
    yield from log.in_order(conversation_id, _PAGE)


def entry_record(entry: LogEntry) -> dict[str, Any]:
    """One entry as an export record; a damaged row keeps its raw payload text."""
    record: dict[str, Any] = {
        "seq": entry.seq,
        "conversation_id": entry.conversation_id,
        "created_at": entry.created_at,
    }
    if isinstance(entry, DamagedEvent):
        record.update(kind=entry.kind, damaged=True, payload_raw=entry.raw)
        return record
    payload = dump_event(entry.event)
    record.update(
        kind=entry.event.kind,
        schema_version=int(payload.get("schema_version", SCHEMA_VERSION)),
        payload=payload,
        event_id=entry.event_id,
        turn_id=entry.turn_id,
        writer=entry.writer,
    )
    return record


def attachment_shas(entry: LogEntry) -> list[str]:
    """The blobs an entry's attachments reference."""
    if isinstance(entry, DamagedEvent) or not isinstance(entry.event, MessageEvent):
        return []
    return [p.sha256 for p in entry.event.parts if isinstance(p, AttachmentPart)]


def write_export(
    out: TextIO,
    entries: Iterable[LogEntry],
    *,
    scope: Scope,
    exported_at: float,
    blobs: Callable[[str], bytes] | None = None,
) -> int:
    """Write the export JSON to `out`, streaming the events; return how many were written.

    With `blobs` (a blob reader) the attached files follow the events as `"blobs"`, SHA-256
    to base64, so an import restores them; a blob this device lacks is left out.
    """
    out.write(f'{{"format": "{EXPORT_FORMAT}", "version": {EXPORT_VERSION}, ')
    out.write(f'"scope": "{scope}", "exported_at": {json.dumps(exported_at)},\n"events": [')
    count = 0
    shas: dict[str, None] = {}
    for entry in entries:
        out.write(",\n" if count else "\n")
        out.write(strict_json(entry_record(entry), ensure_ascii=False))
        shas.update(dict.fromkeys(attachment_shas(entry)))
        count += 1
    out.write("\n]")
    if blobs is not None and shas:
        out.write(',\n"blobs": {')
        first = True
        for sha in shas:
            try:
                data = blobs(sha)
            except MissingBlob:
                continue
            out.write("\n" if first else ",\n")
            out.write(f'"{sha}": "{base64.b64encode(data).decode("ascii")}"')
            first = False
        out.write("\n}")
    out.write("}\n")
    return count


# -- import ---------------------------------------------------------------------------------


def _encoding(head: bytes) -> str:
    """The text encoding its byte-order mark says (UTF-8 without one)."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    return "utf-8"


def sniff(path: Path) -> ImportFormat:
    """What `path` holds, from its first bytes: a Koroku export, a SQLite database, or neither."""
    try:
        with path.open("rb") as data:
            head = data.read(HEADER_PROBE_BYTES)
    except OSError:
        return "unknown"
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    text = head.decode(_encoding(head), errors="ignore").lstrip("\ufeff")
    return "export" if _HEADER.match(text.encode("utf-8")) else "unknown"


def is_koroku_export(path: Path) -> bool:
    """Whether `path` starts like a Koroku JSON export (looks at its first bytes only)."""
    return sniff(path) == "export"


def read_export(path: Path) -> list[dict[str, Any]]:
    """The event records of an export file, checked; raises `ExportFormatError`.

    UTF-8 and UTF-16/32 (with a byte-order mark) are read; NaN or Infinity anywhere (numbers
    too large for a float too), nesting deeper than `MAX_DEPTH`, lone surrogates, seqs past
    `MAX_SEQ`, schema versions that are not whole numbers and times that are not real dates
    are refused. Never raises anything else, whatever the bytes.
    """
    return read_export_contents(path).records


def _read_blobs(data: dict[str, Any]) -> dict[str, bytes]:
    """The export's attached files, each checked against its SHA-256 name."""
    raw = data.get("blobs") or {}
    if not isinstance(raw, dict):
        raise ExportFormatError("the export's blobs must be an object")
    blobs: dict[str, bytes] = {}
    for sha, text in raw.items():
        try:
            content = base64.b64decode(text, validate=True) if isinstance(text, str) else None
        except (binascii.Error, ValueError):
            content = None
        if content is None or sha256_of(content) != sha:
            raise ExportFormatError(f"attached file {str(sha)[:12]}… does not match its hash")
        blobs[sha] = content
    return blobs


@dataclass(frozen=True)
class ExportContents:
    """An export file read whole and checked: its scope, event records and attached files."""

    scope: str
    records: list[dict[str, Any]]
    blobs: dict[str, bytes]


def read_export_contents(path: Path) -> ExportContents:
    """The export at `path`, read whole and checked (see `read_export`); raises
    `ExportFormatError`."""
    try:
        raw = path.read_bytes()
        text = raw.decode(_encoding(raw[:4])).lstrip("\ufeff")
    except (OSError, ValueError) as exc:
        raise ExportFormatError(f"cannot read {path}: {exc}") from None
    data = load_export_json(text, str(path))
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise ExportFormatError(f"{path} is not a Koroku export")
    if not isinstance(data.get("version"), int) or data["version"] > EXPORT_VERSION:
        raise ExportFormatError(f"export version {data.get('version')!r} is not supported")
    events = data.get("events")
    if not isinstance(events, list):
        raise ExportFormatError("the export has no list of events")
    last = 0
    for n, record in enumerate(events):
        check_record(n, record, last)
        last = record["seq"]
    scope = data.get("scope")
    return ExportContents(scope if isinstance(scope, str) else "all", events, _read_blobs(data))


def _row(record: dict[str, Any]) -> tuple[tuple[Any, ...], str]:
    """The `events` row of a record and its searchable text (damaged rows: none)."""
    kind = record["kind"]
    if record.get("damaged"):
        payload_text = record["payload_raw"]
        version = SCHEMA_VERSION
        text = ""
    else:
        payload = record["payload"]
        version = int(record.get("schema_version") or payload.get("schema_version") or 1)
        payload_text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        try:
            text = searchable_text(upcast(kind, payload))
        except Exception:  # noqa: BLE001 — any shape no event has: kept as written, read back as damaged
            text = ""
    row = (
        record["seq"],
        record["conversation_id"],
        kind,
        version,
        payload_text,
        float(record["created_at"]),
        # Ids travel with the events (older exports have none: read back as legacy ids).
        _text_or_none(record.get("event_id")),
        _text_or_none(record.get("turn_id")),
        _text_or_none(record.get("writer")),
    )
    return row, text


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def import_export(
    log: SqliteEventLog, path: Path, blobs: BlobStore | None = None
) -> PortableImport:
    """Write every event of the export at `path` into the (empty) log, seqs and times kept.

    One transaction: all events and their search text, or nothing; then the attached files
    go into `blobs`. Raises `ExportFormatError` for a bad file (attachments included) and
    `LogNotEmptyError` if the log has any event.
    """
    return import_contents(log, read_export_contents(path), blobs)


def import_contents(
    log: SqliteEventLog, contents: ExportContents, blobs: BlobStore | None = None
) -> PortableImport:
    """`import_export` of an export already read and checked (`read_export_contents`)."""
    records, attached = contents.records, contents.blobs
    prepared = [_row(r) for r in records]
    with log.batch():
        if log.count() != 0:
            raise LogNotEmptyError(
                f"the event log {log.path} already has events; import into an empty data dir"
            )
        conn = log._conn().conn()  # the store's own connection, inside `batch`'s transaction
        for row, text in prepared:
            conn.execute(_INSERT, row)
            if text:
                log.index.stage(conn, row[0], text)
    log.index.flush()
    if blobs is not None:
        for content in attached.values():
            blobs.put(content)
    first = records[0]["seq"] if records else 0
    last = records[-1]["seq"] if records else 0
    return PortableImport(len(records), first, last, _repairs(records))


def _repairs(records: list[dict[str, Any]]) -> list[Fix]:
    by_conversation: dict[str, list[tuple[int, object]]] = {}
    for record in records:
        if record.get("damaged"):
            continue  # skipped when loaded, like any damaged row
        try:
            event = upcast(record["kind"], record["payload"])
        except Exception:  # noqa: BLE001 — read back as damaged, like any row no event matches
            continue
        by_conversation.setdefault(record["conversation_id"], []).append((record["seq"], event))
    return [fix for events in by_conversation.values() for fix in log_fixes(events)]

"""SqliteEventLog: the append-only event log on SQLite (Peewee), with full-text search.

Rows of `events` are only ever inserted. Every read goes through `seq` (the rowid) or the
`(conversation_id, kind, seq)` index, so startup and paging cost do not grow with the log.
Each thread gets its own connection; WAL lets readers run while a writer appends.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from koroku_desktop.domain.conversations import Activity
from koroku_desktop.domain.coverage import whole_turns_together
from koroku_desktop.domain.errors import StorageError
from koroku_desktop.domain.events import (
    SCHEMA_VERSION,
    CompactionEvent,
    DamagedEvent,
    Event,
    LogEntry,
    StoredEvent,
)
from koroku_desktop.domain.ids import new_id, observe, writer_name
from koroku_desktop.domain.queries import EntryQuery, LiveLoad, SearchHit
from koroku_desktop.store.data_dir import data_dir_for, release
from koroku_desktop.store.database import (
    SQL_ERRORS,
    Connection,
    KorokuDatabase,
    connect,
    prepare_file,
)
from koroku_desktop.store.log import coverage_index
from koroku_desktop.store.log.activity import ActivityCache, conversation_activity
from koroku_desktop.store.log.live_load import load_live
from koroku_desktop.store.log.migrations import MigrationNeeded, migrate, pending_migrations
from koroku_desktop.store.log.order import in_order
from koroku_desktop.store.log.page_query import read_page
from koroku_desktop.store.log.paging import PagedLog
from koroku_desktop.store.log.rows import COLUMNS, Row, parse_row
from koroku_desktop.store.search.query import SEARCH_SQL, pending_rows, search_hits
from koroku_desktop.store.search.searchable import fts_query, searchable_text
from koroku_desktop.store.vectors.store import VectorStore

log = logging.getLogger(__name__)

_INSERT_EVENT = (
    "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at,"
    " event_id, turn_id, writer) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_MERGE_EVENT = (
    "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at,"
    " event_id, turn_id, writer, hub_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (event_id) DO NOTHING"
)
_SET_HUB_SEQ = "UPDATE events SET hub_seq = ? WHERE event_id = ? AND hub_seq IS NULL"


class StoreClosedError(StorageError, RuntimeError):
    """The log was used after `close()`."""


class SqliteEventLog(PagedLog):
    """The `EventLog` on a SQLite file: atomic appends, live loads, paging and search.

    Opening runs pending migrations (backing the file up first; their names end up in
    `migrations_run`). Safe to share between the asyncio thread and worker threads; several
    instances or processes may open one file and see each other's appends.
    """

    def __init__(self, path: Path, *, read_only: bool = False, writer: str | None = None) -> None:
        """`read_only` opens an existing file without writing to it or its folder (for the
        commands that only read); it raises `MigrationNeeded` if the file must be upgraded.
        `writer` is recorded on every event this instance appends (`<front end>@<host>`)."""
        self.path = Path(path)
        self.read_only = read_only
        self.writer = writer or writer_name("koroku")
        self._watch: Connection | None = None
        self._watch_lock = threading.Lock()
        if not read_only:
            prepare_file(self.path)
        self._dir = data_dir_for(self.path, read_only=read_only)
        self._db = self._dir.database
        self._closed = False
        self._reads = 0
        self._reads_done = threading.Condition()
        self._damaged: set[int] = set()
        self._damaged_lock = threading.Lock()
        self._activity = ActivityCache(self._rows)
        try:
            self.migrations_run: list[str] = self._migrate()
        except BaseException:
            release(self._dir)  # a damaged or older file: nothing stays open behind the error
            raise
        self.index = self._dir.index()
        """The file's full-text index (made once per file by store/data_dir.py)."""

    @property
    def vectors(self) -> VectorStore:
        """The file's vectors (store/vectors/store.py), made by the data dir, not the log."""
        return self._dir.vectors()

    def _migrate(self) -> list[str]:
        if not self.read_only:
            return migrate(self._db, self.path)
        pending = pending_migrations(self._db.conn())
        if pending:
            raise MigrationNeeded(f"{self.path} needs migrations: {', '.join(pending)}")
        return []

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Fold pending search text, close every thread's connection; no use afterwards."""
        if self._closed:
            return
        try:
            if not self.read_only:
                self.index.flush()
        except Exception as exc:  # noqa: BLE001 — closing must not fail; the text stays pending for next time
            log.info("could not fold pending search text on close: %s", exc)
        self._closed = True
        # A reader in a worker thread (the viewer, a follow step) may still be inside SQLite:
        # closing its connection under it would crash the process. Let it finish first.
        with self._reads_done:
            self._reads_done.wait_for(lambda: self._reads == 0, timeout=5)
        with self._watch_lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
        release(self._dir)

    def __enter__(self) -> SqliteEventLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def database(self) -> KorokuDatabase:
        """The data dir's one database this log is on (shared with its lease and ledger)."""
        return self._conn()

    def _conn(self) -> KorokuDatabase:
        if self._closed:
            raise StoreClosedError(f"event log {self.path} is closed")
        return self._db

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group several `append` calls into one transaction (used by imports)."""
        with self._conn().atomic("IMMEDIATE"):
            yield

    # -- writing ---------------------------------------------------------------------------

    def _search_text(self, event: Event) -> str:
        """The text indexed for `event`; a hook so benchmarks can measure without FTS."""
        return searchable_text(event)

    def append(
        self, conversation_id: str, events: Sequence[Event], *, turn_id: str | None = None
    ) -> list[StoredEvent]:
        """Write events in one transaction (with their search text); return them with seqs.

        Each gets a new event id; all get `turn_id` (default: the first one's event id).
        Raises `sqlite3.Error` if the write fails; then nothing of the call was written.
        """
        if not events:
            return []
        now = time.time()
        newest = self._rows("SELECT MAX(event_id) FROM events")[0][0]
        if newest:
            observe(str(newest))  # after everything seen, whatever the other clocks say
        ids = [new_id() for _ in events]
        turn = turn_id or ids[0]
        incoming = [
            StoredEvent(0, conversation_id, now, event, event_id, turn, self.writer)
            for event, event_id in zip(events, ids, strict=True)
        ]
        return self._insert(incoming, _INSERT_EVENT)

    def merge(
        self, incoming: Sequence[StoredEvent], hub_seqs: Sequence[int] | None = None
    ) -> list[StoredEvent]:
        """Insert events written elsewhere, keeping their ids, turn, writer and time.

        Idempotent on the event id: an event already in the log is skipped (what a sync
        re-delivering events needs). `hub_seqs` (from a sync pull) gives each its place in
        the hub's order, which is then its place in entries order (domain/coverage.py); it is
        also recorded on an event already here that had none yet (pushed by this device just
        before a crash). Without them the events go in after this log's own, each turn's
        events together, so a merge never interleaves two turns. Returns the events inserted,
        with their new local seqs (and hub positions).
        """
        if hub_seqs is not None:
            if len(hub_seqs) != len(incoming):
                raise ValueError("merge: one hub position per event")
            placed = sorted(zip(hub_seqs, incoming, strict=True), key=lambda p: p[0])
            return self._insert([e for _, e in placed], _MERGE_EVENT, [h for h, _ in placed])
        ordered = [dataclasses.replace(e, hub_seq=None) for e in whole_turns_together(incoming)]
        return self._insert(ordered, _MERGE_EVENT, [None] * len(ordered))

    def record_hub_order(self, positions: Sequence[tuple[str, int]]) -> None:
        """Note the hub positions (event id, hub seq) of events this device pushed; one
        transaction. An event that has a position already keeps it."""
        with self._conn().atomic("IMMEDIATE"):
            self._conn().conn().executemany(_SET_HUB_SEQ, [(h, e) for e, h in positions])

    def _insert(
        self, incoming: list[StoredEvent], sql: str, hub_seqs: Sequence[int | None] = ()
    ) -> list[StoredEvent]:
        prepared = [
            (item, item.event.model_dump_json(exclude_none=True), self._search_text(item.event))
            for item in incoming
        ]
        db = self._conn()
        stored: list[StoredEvent] = []
        staged = 0
        with db.atomic("IMMEDIATE"):
            conn = db.conn()
            for n, (item, payload, text) in enumerate(prepared):
                row = (item.conversation_id, item.event.kind, SCHEMA_VERSION, payload)
                identity = (item.created_at, item.event_id, item.turn_id, item.writer)
                hub = (hub_seqs[n],) if hub_seqs else ()
                cursor = conn.execute(sql, row + identity + hub)
                if cursor.rowcount == 0:  # merge: already known
                    if hub and hub[0] is not None:
                        conn.execute(_SET_HUB_SEQ, (hub[0], item.event_id))
                    continue
                seq = int(cursor.lastrowid or 0)
                if text:
                    self.index.stage(conn, seq, text)
                    staged += 1
                stored.append(dataclasses.replace(item, seq=seq, hub_seq=hub[0] if hub else None))
            heads = [
                (s.conversation_id, s.event_id)
                for s in stored
                if isinstance(s.event, CompactionEvent) and s.event.covered_ids is not None
            ]
            if heads:
                coverage_index.note_live_starts(
                    conn, heads
                )  # what it leaves live, found once (coverage_index)
        self.index.staged(staged)
        return stored

    # -- following -------------------------------------------------------------------------

    def data_version(self) -> int:
        """Changes after any commit to the file by anyone (`PRAGMA data_version` on a
        connection kept for this alone): a follower's cheap test before reading anything."""
        with self._watch_lock:
            if self._closed:
                raise StoreClosedError(f"event log {self.path} is closed")
            if self._watch is None:
                self._watch = connect(self.path)
            return int(self._watch.execute("PRAGMA data_version").fetchone()[0])

    # -- reading ---------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        with self._reads_done:
            db = self._conn()
            self._reads += 1
        try:
            rows: list[Row] = db.conn().execute(sql, tuple(params)).fetchall()
        finally:
            with self._reads_done:
                self._reads -= 1
                self._reads_done.notify_all()
        return rows

    def _parse(self, row: Row) -> LogEntry:
        entry = parse_row(row)
        if isinstance(entry, DamagedEvent):
            with self._damaged_lock:
                first_time = entry.seq not in self._damaged
                self._damaged.add(entry.seq)
            if first_time:
                log.warning("skipping damaged event seq=%d: %s", entry.seq, entry.error)
        return entry

    @property
    def damaged_count(self) -> int:
        """How many distinct damaged rows this instance has met so far."""
        with self._damaged_lock:
            return len(self._damaged)

    def get(self, seq: int) -> LogEntry | None:
        """The entry at `seq`, or None if there is no such row."""
        rows = self._rows(f"SELECT {COLUMNS} FROM events WHERE seq = ?", (seq,))
        return self._parse(rows[0]) if rows else None

    def count(self) -> int:
        """Number of rows in the log, damaged ones included."""
        return int(self._rows("SELECT COUNT(*) FROM events")[0][0])

    def conversation_activity(self, *, counts: bool = True) -> dict[str, Activity]:
        """What the log holds of each conversation (store/log/activity.py); `counts=False`
        leaves the message counts out (the one part that reads more than the index edges)
        and reads only what was written since the last such read."""
        if counts:
            return conversation_activity(self._rows)
        return self._activity.read()

    def last_seq(self) -> int:
        """The highest seq written so far (0 for an empty log)."""
        return int(self._rows("SELECT COALESCE(MAX(seq), 0) FROM events")[0][0])

    def integrity_check(self) -> str:
        """SQLite's `PRAGMA integrity_check` verdict ('ok' when healthy); reads the whole file."""
        rows = self._rows("PRAGMA integrity_check")
        return "\n".join(str(r[0]) for r in rows)

    def load_live(self, conversation_id: str, tail_limit: int | None = None) -> LiveLoad:
        """The head boundary, the `rejected` events and the live messages in turn order
        (see store/log/live_load.py and domain/coverage.py).

        With `tail_limit`, a longer live part loads only its last `tail_limit` messages (an
        imported, uncompacted history) and says what it left out in `unloaded`.
        """
        return load_live(self._rows, self._parse, conversation_id, tail_limit)

    def summarised_in(self, event_ids: Sequence[str]) -> dict[str, int]:
        """See `LogReader.summarised_in` (from the derived `coverage` table, m008)."""
        return coverage_index.summarised_in(self._rows, event_ids)

    def summary_span(self, compaction_id: str) -> tuple[int, int, int] | None:
        """See `LogReader.summary_span`."""
        return coverage_index.summary_span(self._rows, compaction_id)

    def _page(self, query: EntryQuery) -> list[LogEntry]:
        """A page of the log by keyset (store/log/page_query.py), damaged rows included."""
        return read_page(self._rows, self._parse, query)

    def in_order(self, conversation_id: str | None = None, page: int = 2000) -> Iterator[LogEntry]:
        """Every entry oldest first in the one order (store/order.py), damaged rows included:
        what `history --all` and exports list, the same on every device."""
        return in_order(self._rows, self._parse, conversation_id, page)

    def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Full-text search over every event ever written, newest first.

        Any text is a valid query: each word is quoted and all words must match.
        """
        match = fts_query(query)
        if match is None or limit <= 0:
            return []
        folded = False
        if not self.read_only:
            try:
                self.index.flush()
                folded = True
            except SQL_ERRORS as exc:  # e.g. a read-only file
                log.info("could not fold pending search text: %s", exc)
        rows = self._rows(SEARCH_SQL, (match, limit))
        if not folded:  # pending text cannot be folded in: search it on the side
            pending = pending_rows(self._conn().conn(), match, limit)
            rows = sorted(rows + pending, key=lambda r: -int(r[0]))
        return search_hits(rows[:limit])

"""`koroku doctor`: check the database file, and salvage what can be read from a damaged one.

`diagnose` runs SQLite's integrity check, counts readable and damaged events and lists the
`.bak-*` backups that migrations left. `recover` copies every event row that can still be
read (by seq range, narrowing around unreadable pages) into a fresh file, keeps the original
aside as `koroku.db.damaged-<stamp>` and puts the fresh file in its place.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.maintenance.doctor_pages import scan_pages
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.database import read_only_uri
from koroku_desktop.store.log.rows import COLUMNS, Row, decode_payload, parse_row, row_identity
from koroku_desktop.store.search.searchable import searchable_text

_SCAN_LIMIT = 1 << 62
"""Highest seq probed past a damaged page (seqs are 64-bit rowids)."""


@dataclass
class Diagnosis:
    """What `koroku doctor` found."""

    path: Path
    exists: bool
    size: int = 0
    integrity: str = ""
    """'ok', SQLite's list of problems, or why the check could not run."""
    good: int = 0
    damaged: int = 0
    unreadable: bool = False
    """Some rows could not be read at all (damaged pages)."""
    backups: list[Path] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        """True when the file passed the check and every row parsed."""
        return self.integrity == "ok" and not self.damaged and not self.unreadable


@dataclass(frozen=True)
class Recovery:
    """What `koroku doctor --recover` saved, and where the original went."""

    recovered: int
    lost_ranges: list[tuple[int, int]]
    original_kept_as: Path


def backups_of(path: Path) -> list[Path]:
    """The `.bak-*` copies taken before migrations, oldest first."""
    return sorted(path.parent.glob(path.name + ".bak-*"))


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(read_only_uri(path), uri=True)
    conn.text_factory = bytes  # nothing in a damaged file may stop the read
    return conn


def _probe(conn: sqlite3.Connection, seq: int) -> bool | None:
    """Whether a scan can start at `seq`: True, False (damaged there), None (no rows after)."""
    try:
        row = conn.execute(
            "SELECT seq FROM events WHERE seq >= ? ORDER BY seq LIMIT 1", (seq,)
        ).fetchone()
    except sqlite3.DatabaseError:
        return False
    return None if row is None else True


def _next_readable(conn: sqlite3.Connection, bad: int) -> int | None:
    """The lowest seq after `bad` from which the table can be read again (None: nothing is).

    Jumps ahead in growing steps, then narrows back, so a bad page costs a few dozen probes.
    """
    failed, step = bad, 1
    while True:
        at = failed + step
        if at > _SCAN_LIMIT:
            return None
        found = _probe(conn, at)
        if found is not False:
            break
        failed, step = at, step * 2
    while at - failed > 1:
        mid = (failed + at) // 2
        if _probe(conn, mid) is False:
            failed = mid
        else:
            at = mid
    return at if _probe(conn, at) else None


def readable_rows(conn: sqlite3.Connection, lost: list[tuple[int, int]]) -> Iterator[Row]:
    """Every row of `events` that can be read, in seq order; unreadable seq ranges go to `lost`.

    Reads on in seq order; where a damaged page stops the scan, it resumes at the next seq
    that can be reached, so a bad page costs only the rows stored on it.
    """
    sql = f"SELECT {COLUMNS} FROM events WHERE seq >= ? ORDER BY seq"
    start = 1
    while True:
        last: int | None = None
        try:
            for row in conn.execute(sql, (start,)):
                last = int(row[0])
                seq, conversation_id, kind, version, payload, created_at, *identity = row
                yield (
                    seq,
                    _text(conversation_id),
                    _text(kind),
                    version,
                    payload,
                    created_at,
                    *(None if value is None else _text(value) for value in identity),
                )
            return
        except sqlite3.DatabaseError:
            pass
        bad = last + 1 if last is not None else start
        resume = _next_readable(conn, bad)
        if resume is None:
            lost.append((bad, -1))
            return
        lost.append((bad, resume - 1))
        start = resume


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def salvage(path: Path) -> tuple[list[Row], list[tuple[int, int]]]:
    """Every readable `events` row of `path` by seq, and the seq ranges missing among them.

    Rows are read through SQLite where its tree still leads to them, and straight from the
    leaf pages where it does not (see `doctor_pages`).
    """
    found: dict[int, Row] = {}
    try:
        conn = _connect(path)
        try:
            for row in readable_rows(conn, []):
                found[int(row[0])] = row
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        pass  # not even the schema can be read: the page scan below is all there is
    for row in scan_pages(path):
        found.setdefault(int(row[0]), row)
    seqs = sorted(found)
    gaps: list[tuple[int, int]] = []
    previous = 0
    for seq in seqs:
        if seq > previous + 1:
            gaps.append((previous + 1, seq - 1))
        previous = seq
    return [found[s] for s in seqs], gaps


def diagnose(path: Path) -> Diagnosis:
    """Check `path` without writing anything (safe on a read-only or damaged file)."""
    report = Diagnosis(path=path, exists=path.is_file(), backups=backups_of(path))
    if not report.exists:
        report.integrity = "no database yet"
        return report
    report.size = path.stat().st_size
    try:
        conn = _connect(path)
    except sqlite3.DatabaseError as exc:
        report.integrity = f"cannot open: {exc}"
        report.unreadable = True
        return report
    try:
        try:
            checked = conn.execute("PRAGMA integrity_check(20)").fetchall()
            report.integrity = "\n".join(_text(r[0]) for r in checked)
        except sqlite3.DatabaseError as exc:
            report.integrity = f"cannot be checked: {exc}"
        healthy = report.integrity == "ok"
        rows = list(readable_rows(conn, [])) if healthy else salvage(path)[0]
    finally:
        conn.close()
    for row in rows:
        if isinstance(parse_row(row), StoredEvent):
            report.good += 1
        else:
            report.damaged += 1
    report.unreadable = not healthy
    return report


def recover(path: Path) -> Recovery:
    """Salvage every readable event of `path` into a fresh file that takes its place."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    fresh = path.with_name(f"{path.name}.recovering-{stamp}")
    kept = path.with_name(f"{path.name}.damaged-{stamp}")
    SqliteEventLog(fresh).close()  # an empty, fully migrated log
    rows, lost = salvage(path)
    target = sqlite3.connect(fresh)
    recovered = 0
    try:
        with target:
            for row in rows:
                seq, conversation_id, kind, version, payload, created_at, *identity = row
                # The ids survive (a row from before m004 gets the id its migration would give).
                ids = row_identity(seq, created_at, decode_payload(payload), list(identity))
                target.execute(
                    "INSERT INTO events (seq, conversation_id, kind, schema_version, payload,"
                    " created_at, event_id, turn_id, writer)"
                    " VALUES (?, ?, ?, ?, CAST(? AS TEXT), ?, ?, ?, ?)",
                    (
                        seq,
                        conversation_id,
                        kind,
                        version or 1,
                        payload,
                        created_at or time.time(),
                        *ids,
                    ),
                )
                entry = parse_row(row)
                if isinstance(entry, StoredEvent) and (text := searchable_text(entry.event)):
                    target.execute(
                        "INSERT INTO events_fts_pending (seq, body) VALUES (?, ?)", (seq, text)
                    )
                recovered += 1
    finally:
        target.close()
    os.chmod(fresh, 0o600)
    for suffix in ("", "-wal", "-shm"):
        old = Path(str(path) + suffix)
        if old.exists():
            os.replace(old, Path(str(kept) + suffix))
    os.replace(fresh, path)
    return Recovery(recovered=recovered, lost_ranges=lost, original_kept_as=kept)

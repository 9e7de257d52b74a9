"""`koroku doctor`: check the database file, and salvage what can be read from a damaged one.

`diagnose` runs SQLite's integrity check, compares the schema with the one Koroku writes
(a damaged column name passes the integrity check but breaks every command), counts readable
and damaged events and lists the `.bak-*` backups that migrations left. `recover` copies every
event row that can still be read whole (by seq range, narrowing around unreadable pages) into
a fresh file, keeps the original aside as `koroku.db.damaged-<stamp>` (the damaged rows stay
there, listed in the report) and puts the fresh file in its place. Nothing here trusts the
file: every error is a finding, never a crash.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path

from koroku_desktop.domain.events import StoredEvent
from koroku_desktop.maintenance.doctor_pages import scan_pages
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.database import Connection, DatabaseError, connect, read_only_uri
from koroku_desktop.store.log.migrations import pending_migrations
from koroku_desktop.store.log.rows import Row, decode_payload, parse_row, row_identity
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
    schema: list[str] = field(default_factory=list)
    """What differs from the schema Koroku writes (a damaged name, a table gone)."""

    @property
    def healthy(self) -> bool:
        """True when the file passed the checks and every row parsed."""
        return (
            self.integrity == "ok" and not self.schema and not self.damaged and not self.unreadable
        )


@dataclass(frozen=True)
class Recovery:
    """What `koroku doctor --recover` saved, and where the original went."""

    recovered: int
    lost_ranges: list[tuple[int, int]]
    original_kept_as: Path
    set_aside: list[tuple[int, str]] = field(default_factory=list)
    """Rows read but not whole (seq, why): left out of the fresh file, kept in the original."""


def backups_of(path: Path) -> list[Path]:
    """The `.bak-*` copies taken before migrations, oldest first."""
    return sorted(path.parent.glob(path.name + ".bak-*"))


def _connect(path: Path) -> Connection:
    conn = connect(read_only_uri(path), uri=True)
    conn.text_factory = bytes  # nothing in a damaged file may stop the read
    return conn


def _probe(conn: Connection, seq: int) -> bool | None:
    """Whether a scan can start at `seq`: True, False (damaged there), None (no rows after)."""
    try:
        row = conn.execute(
            "SELECT rowid FROM events WHERE rowid >= ? ORDER BY rowid LIMIT 1", (seq,)
        ).fetchone()
    except DatabaseError:
        return False
    return None if row is None else True


def _next_readable(conn: Connection, bad: int) -> int | None:
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


_WIDTH = 10
"""Columns of an `events` row as `rows.COLUMNS` lists them (seq ... hub_seq)."""


def readable_rows(conn: Connection, lost: list[tuple[int, int]]) -> Iterator[Row]:
    """Every row of `events` that can be read, in seq order; unreadable seq ranges go to `lost`.

    Reads on in seq order; where a damaged page stops the scan, it resumes at the next seq
    that can be reached, so a bad page costs only the rows stored on it. Columns are taken by
    position (`rowid, *`), so a damaged column name in the schema does not stop the read;
    text that is not UTF-8 stays bytes, for `_whole` to judge.
    """
    sql = "SELECT rowid, * FROM events WHERE rowid >= ? ORDER BY rowid"
    start = 1
    while True:
        last: int | None = None
        try:
            for row in conn.execute(sql, (start,)):
                last = int(row[0])
                values = [*row[2 : 1 + _WIDTH], *[None] * _WIDTH][: _WIDTH - 1]
                conversation_id, kind, version, payload, created_at, *identity = values
                yield (
                    last,
                    _text(conversation_id),
                    _text(kind),
                    version,
                    payload,
                    created_at,
                    *(_text(value) for value in identity),
                )
            return
        except DatabaseError:
            pass
        bad = last + 1 if last is not None else start
        resume = _next_readable(conn, bad)
        if resume is None:
            lost.append((bad, -1))
            return
        lost.append((bad, resume - 1))
        start = resume


def _text(value: object) -> object:
    """Text columns as str where they are UTF-8; damaged text stays bytes (see `_whole`)."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


def _whole(row: Row) -> str | None:
    """Why a read row is not whole (None: it is): unparsable, or text that is not UTF-8."""
    names = (
        *("seq", "conversation_id", "kind", "schema_version", "payload", "created_at"),
        *("event_id", "turn_id", "writer", "hub_seq"),
    )
    for name, value in zip(names, row, strict=False):
        if name != "payload" and isinstance(value, bytes):
            return f"its {name} is not UTF-8 text"
    entry = parse_row(row)
    return entry.error if not isinstance(entry, StoredEvent) else None


@cache
def _expected_schema() -> dict[str, list[str]]:
    """Every table (and its columns) and index a freshly migrated log has."""
    with tempfile.TemporaryDirectory(prefix="koroku-doctor-") as tmp:
        fresh = Path(tmp) / "koroku.db"
        SqliteEventLog(fresh).close()
        conn = connect(fresh)
        try:
            return _schema_of(conn)
        finally:
            conn.close()


def _schema_of(conn: Connection) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for kind, name in conn.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ).fetchall():
        name = _text(name)
        if not isinstance(name, str):
            found[repr(name)] = []
        elif _text(kind) == b"index" or _text(kind) == "index":
            found[f"index {name}"] = []
        else:
            columns = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
            found[name] = [str(_text(c[1])) for c in columns]
    return found


def schema_problems(conn: Connection) -> list[str]:
    """How the file's schema differs from Koroku's (empty: it does not).

    A file not yet migrated may lack what later migrations add; it must still hold nothing
    Koroku never wrote (a flipped byte in a name shows as a name Koroku does not know).
    """
    try:
        have = _schema_of(conn)
        migrated = not pending_migrations(conn)
    except DatabaseError as exc:
        return [f"the schema cannot be read: {exc}"]
    want = _expected_schema()
    problems: list[str] = []
    for name, columns in have.items():
        if name not in want:
            if not name.startswith("events_fts"):
                problems.append(f"unknown table or index {name!r}")
            continue
        unknown = [c for c in columns if c not in want[name]]
        if unknown:
            problems.append(f"{name}: unknown column(s) {', '.join(map(repr, unknown))}")
        elif migrated and columns != want[name]:
            problems.append(f"{name}: columns {columns} (expected {want[name]})")
    if migrated:
        problems += [f"{name} is missing" for name in want if name not in have]
    return problems


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
    except DatabaseError:
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
    except (DatabaseError, OSError) as exc:
        report.integrity = f"cannot open: {exc}"
        report.unreadable = True
        return report
    try:
        try:
            checked = conn.execute("PRAGMA integrity_check(20)").fetchall()
            report.integrity = "\n".join(str(_text(r[0])) for r in checked)
        except DatabaseError as exc:
            report.integrity = f"cannot be checked: {exc}"
        report.schema = schema_problems(conn) if report.integrity == "ok" else []
        lost: list[tuple[int, int]] = []
        if report.integrity == "ok":
            rows = list(readable_rows(conn, lost))
        else:
            rows, lost = salvage(path)
    finally:
        conn.close()
    for row in rows:
        if _whole(row) is None:
            report.good += 1
        else:
            report.damaged += 1
    report.unreadable = report.integrity != "ok" or bool(lost)
    return report


def recover(path: Path) -> Recovery:
    """Salvage every readable event of `path` into a fresh file that takes its place."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    fresh = path.with_name(f"{path.name}.recovering-{stamp}")
    kept = path.with_name(f"{path.name}.damaged-{stamp}")
    SqliteEventLog(fresh).close()  # an empty, fully migrated log
    rows, lost = salvage(path)
    target = connect(fresh)
    recovered = 0
    set_aside: list[tuple[int, str]] = []
    try:
        with target:
            for row in rows:
                why = _whole(row)
                if why is not None:
                    set_aside.append((int(row[0]), why))
                    continue
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
    return Recovery(
        recovered=recovered, lost_ranges=lost, original_kept_as=kept, set_aside=set_aside
    )

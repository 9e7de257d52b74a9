"""The log is append-only by construction: no code in the app updates or deletes events."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "koroku_desktop"
FORBIDDEN = re.compile(
    r"""\b(?:update\s+(?:or\s+\w+\s+)?|delete\s+from\s+|replace\s+into\s+|"""
    r"""insert\s+or\s+replace\s+into\s+|drop\s+table\s+(?:if\s+exists\s+)?)"""
    r"""["'`\[]?events(?:_fts)?\b""",
    re.IGNORECASE,
)


# The one rewrite ever allowed: migration m004 fills the id columns it adds (event_id,
# turn_id, writer) on rows written before they existed; payloads are never touched.
BACKFILL = ("store/log/migrations.py", "UPDATE events SET event_id = ?, turn_id = ?, writer = ?")
# And sync's bookkeeping: an event's place in the hub's order, set once (NULL -> position)
# when it is pushed or pulled; the event itself is never touched.
HUB_ORDER = (
    "store/log/event_log.py",
    '"UPDATE events SET hub_seq = ? WHERE event_id = ? AND hub_seq IS NULL"',
)
# The same for a row without an event id (an old Koroku's, a raw import): placed by seq.
HUB_ORDER_BY_SEQ = (
    "store/sync_ledger.py",
    '"UPDATE events SET hub_seq = ? WHERE seq = ? AND event_id IS NULL AND hub_seq IS NULL"',
)


def test_no_update_or_delete_of_events_in_the_app() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FORBIDDEN.search(line)
        and not any(
            path.as_posix().endswith(f) and allowed in line
            for f, allowed in (BACKFILL, HUB_ORDER, HUB_ORDER_BY_SEQ)
        )
    ]
    assert offenders == []


def test_the_pattern_catches_what_it_should() -> None:
    for sql in (
        "UPDATE events SET payload = ?",
        'delete from "events" where seq = 1',
        "INSERT OR REPLACE INTO events_fts VALUES (1, 'x')",
        "DROP TABLE IF EXISTS events",
    ):
        assert FORBIDDEN.search(sql), sql
    assert not FORBIDDEN.search("INSERT INTO events (kind) VALUES (?)")

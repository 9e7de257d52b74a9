"""The staged FTS index: search text is committed with its event and always found by search."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.search.index import FLUSH_AT


def _say(text: str) -> MessageEvent:
    return MessageEvent(role="user", parts=[TextPart(text=text)])


def _pending(db_path: Path) -> int:
    with sqlite3.connect(db_path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM events_fts_pending").fetchone()[0])


def test_text_is_staged_in_the_append_and_folded_in_batches(
    log: SqliteEventLog, db_path: Path
) -> None:
    log.append("c", [_say("first kingfisher")])
    assert _pending(db_path) == 1
    for i in range(FLUSH_AT - 1):
        log.append("c", [_say(f"filler {i}")])
    assert _pending(db_path) == 0  # folded once FLUSH_AT rows were staged
    assert [h.seq for h in log.search("kingfisher")] == [1]


def test_search_sees_text_another_process_appended_and_never_folded(db_path: Path) -> None:
    SqliteEventLog(db_path).close()
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from koroku_desktop.store.log.event_log import SqliteEventLog\n"
        "from koroku_desktop.domain.events import MessageEvent\n"
        "from koroku_desktop.domain.parts import TextPart\n"
        "log = SqliteEventLog(Path(sys.argv[1]))\n"
        "log.append('c', [MessageEvent(role='user', parts=[TextPart(text='a lonely ibis')])])\n"
        "os._exit(0)  # killed before close: the text stays pending\n"
    )
    subprocess.run([sys.executable, "-c", code, str(db_path)], check=True)
    assert _pending(db_path) == 1
    with SqliteEventLog(db_path) as log:
        hits = log.search("ibis")
        assert [h.snippet for h in hits] == ["a lonely [[ibis]]"]
    assert _pending(db_path) == 0


def test_close_folds_what_is_pending(db_path: Path) -> None:
    with SqliteEventLog(db_path) as log:
        log.append("c", [_say("egret")])
    assert _pending(db_path) == 0
    with sqlite3.connect(db_path) as conn:
        assert conn.execute(
            "SELECT rowid FROM events_fts WHERE events_fts MATCH 'egret'"
        ).fetchall() == [(1,)]

"""Importing the tutorial's SessionManager database: both payload shapes, tolerantly."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import CompactionEvent, MessageEvent, StoredEvent
from koroku_desktop.domain.parts import (
    FunctionCallPart,
    FunctionResponsePart,
    InlineDataPart,
    TextPart,
    UnknownPart,
)
from koroku_desktop.maintenance.tutorial_import import import_tutorial_db
from koroku_desktop.maintenance.tutorial_parts import part_from_json, standard_base64
from koroku_desktop.store import SqliteEventLog

SIG = bytes(range(250, 256)) + b"\xfb\xff signature"


def tutorial_db(path: Path, rows: list[Any], payload_column: str = "payload") -> Path:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            f"CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT,"
            f" {payload_column} TEXT, created_at TEXT)"
        )
        for row in rows:
            text = row if isinstance(row, str) else json.dumps(row)
            session = "other" if isinstance(row, dict) and row.get("_other") else "s1"
            conn.execute(
                f"INSERT INTO messages (session_id, {payload_column}, created_at)"
                " VALUES (?, ?, '2025-01-01')",
                (session, text),
            )
    conn.close()
    return path


def live_messages(log: SqliteEventLog, conversation_id: str) -> list[MessageEvent]:
    live = log.load_live(conversation_id)
    return ContextView.from_tail(live.boundary, live.events).message_events()


def test_old_shape_sdk_content_rows(tmp_path: Path, log: SqliteEventLog) -> None:
    urlsafe_sig = base64.urlsafe_b64encode(SIG).decode().rstrip("=")
    src = tutorial_db(
        tmp_path / "tutorial.db",
        [
            {"role": "user", "parts": [{"text": "list my files"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Let me look.", "thought": True},
                    {
                        "functionCall": {"name": "bash", "args": {"command": "ls"}, "id": "c-1"},
                        "thoughtSignature": urlsafe_sig,
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "function_response": {
                            "name": "bash",
                            "response": {"output": "a.txt"},
                            "id": "c-1",
                        },
                        "video_metadata": None,
                    }
                ],
            },
        ],
        payload_column="content",
    )
    report = import_tutorial_db(src, log, "imported")
    assert (report.imported, report.skipped, report.errors) == (3, 0, [])
    first, call, response = live_messages(log, "imported")
    assert first.role == "user" and first.origin == "import"
    assert call.role == "model"
    thought, fc = call.parts
    assert isinstance(thought, TextPart) and thought.thought
    assert isinstance(fc, FunctionCallPart) and fc.args == {"command": "ls"} and fc.id == "c-1"
    assert fc.signature_bytes() == SIG
    (fr,) = response.parts
    assert isinstance(fr, FunctionResponsePart) and fr.response == {"output": "a.txt"}


def test_new_shape_with_compaction_and_bad_rows(tmp_path: Path, log: SqliteEventLog) -> None:
    log.append("someone-else", [MessageEvent(role="user", parts=[TextPart(text="x")])])
    src = tutorial_db(
        tmp_path / "tutorial.db",
        [
            {"event_type": "message", "content": {"role": "user", "parts": [{"text": "hi"}]}},
            {"event_type": "message", "content": {"role": "model", "parts": [{"text": "yo"}]}},
            "{broken json",
            {"event_type": "compaction", "summary": "They greeted each other."},
            {"event_type": "telemetry", "ms": 3},
            {"event_type": "message", "content": {"role": "user", "parts": [{"text": "again"}]}},
            {"event_type": "message", "content": {"role": "martian", "parts": [{"text": "?"}]}},
        ],
    )
    report = import_tutorial_db(src, log, "imported")
    assert report.imported == 4 and report.skipped == 3 and len(report.errors) == 3
    assert any("row 3" in e for e in report.errors)
    entries = [e for e in log.entries("imported") if isinstance(e, StoredEvent)]
    compaction = entries[2]
    assert isinstance(compaction.event, CompactionEvent)
    assert compaction.event.covers_up_to_seq == entries[1].seq
    assert compaction.event.kept_from_seq == entries[1].seq + 1 == compaction.seq
    live = log.load_live("imported")
    assert live.boundary is not None and live.boundary.seq == compaction.seq
    assert [m.parts for m in live_messages(log, "imported")] == [[TextPart(text="again")]]
    assert log.search("greeted")[0].kind == "compaction"


def test_session_filter_and_missing_table(tmp_path: Path, log: SqliteEventLog) -> None:
    src = tutorial_db(
        tmp_path / "t.db",
        [
            {"role": "user", "parts": [{"text": "mine"}]},
            {"role": "user", "parts": [{"text": "theirs"}], "_other": True},
        ],
        payload_column="data",
    )
    assert import_tutorial_db(src, log, "c", session_id="s1").imported == 1
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    report = import_tutorial_db(empty, log, "c")
    assert report.imported == 0 and report.errors


def test_part_mapping_is_tolerant() -> None:
    raw_unknown = {"videoMetadata": {"fps": 2}, "text": "x"}
    assert part_from_json(raw_unknown) == UnknownPart(raw=raw_unknown)
    inline = part_from_json({"inlineData": {"mimeType": "image/png", "data": "-_8"}})
    assert isinstance(inline, InlineDataPart)
    assert base64.b64decode(inline.data) == b"\xfb\xff"
    all_nulls = {"text": "hello", "thought": None, "function_call": None, "inline_data": None}
    assert part_from_json(all_nulls) == TextPart(text="hello")
    assert standard_base64(base64.urlsafe_b64encode(SIG).decode()) == base64.b64encode(SIG).decode()

"""`koroku import` brings a tutorial SessionManager database in, and the conversation goes on."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini

SIG = bytes(range(200, 232))


def _tutorial_db(path: Path) -> None:
    rows = [
        {"role": "user", "parts": [{"text": "what is in todo.txt?"}]},
        {
            "event_type": "message",
            "content": {
                "role": "model",
                "parts": [
                    {
                        "function_call": {"name": "read_file", "args": {"path": "todo.txt"}},
                        "thought_signature": base64.urlsafe_b64encode(SIG).decode(),
                    }
                ],
            },
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read_file", "response": {"content": "buy bread"}}}
            ],
        },
        {"event_type": "message", "content": {"role": "model", "parts": [{"text": "Buy bread."}]}},
    ]
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, payload TEXT,"
            " created_at TEXT)"
        )
        conn.executemany(
            "INSERT INTO messages (session_id, payload, created_at) VALUES ('s', ?, '2025-01-01')",
            [(json.dumps(r),) for r in rows],
        )


def test_import_then_continue_against_the_fake_server(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    source = tmp_path / "tutorial.db"
    _tutorial_db(source)
    result = koroku.run("import", str(source))
    assert result.returncode == 0, result.stderr
    assert "imported 4 event(s)" in result.stdout
    fake_gemini.reply_text("You still need bread.")
    ask = koroku.run("ask", "what was on my list?")
    assert ask.returncode == 0, ask.stderr
    sent = fake_gemini.generate_requests()[-1].contents
    assert [c["role"] for c in sent] == ["user", "model", "user", "model", "user"]
    call_part = sent[1]["parts"][0]
    sig = call_part["thoughtSignature"]
    assert base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4)) == SIG
    history = koroku.run("history")
    assert "what is in todo.txt?" in history.stdout and "Buy bread." in history.stdout

"""A row whose payload is not UTF-8 (bit rot, a bad import) is a damaged row like any other."""

from __future__ import annotations

import json
import sqlite3

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini

# A message payload with one byte that is not UTF-8 (0xff) in the middle of its text.
BAD_UTF8 = b'{"kind":"message","role":"user","parts":[{"kind":"text","text":"caf\xff"}]}'


def _plant(koroku: Koroku, payload: bytes) -> None:
    with sqlite3.connect(koroku.home / "koroku.db") as conn:
        conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
            " VALUES ('default', 'message', 1, CAST(? AS TEXT), 0)",
            (payload,),
        )


def test_bad_utf8_row_is_damaged_and_every_command_keeps_working(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_text("first answer")
    assert koroku.run("ask", "one").returncode == 0
    _plant(koroku, BAD_UTF8)
    _plant(koroku, b"\xfe\xfe not json at all")

    history = koroku.run("history", "--all")
    assert history.returncode == 0, history.stderr
    assert history.stdout.count("[damaged") == 2
    assert "UnicodeDecodeError" in history.stdout
    live = koroku.run("history")
    assert live.returncode == 0, live.stderr
    assert "2 damaged event(s) skipped" in live.stderr

    export = koroku.run("export", "--format", "json")
    assert export.returncode == 0, export.stderr
    records = json.loads(export.stdout)["events"]
    assert sum(1 for r in records if r.get("damaged")) == 2

    search = koroku.run("search", "first")
    assert search.returncode == 0, search.stderr
    assert "[[first]] answer" in search.stdout

    fake_gemini.reply_text("still answering")
    ask = koroku.run("ask", "two")
    assert ask.returncode == 0, ask.stderr
    assert ask.stdout.strip() == "still answering"
    sent = fake_gemini.generate_requests()[-1].contents
    assert [c["role"] for c in sent] == ["user", "model", "user"]

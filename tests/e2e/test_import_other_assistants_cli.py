"""`koroku import` of ChatGPT's and Claude's data exports with real `koroku` processes on one
data dir: every chat a conversation marked with its origin; importing again adds nothing, a
newer export only the new messages; a damaged file is one line and changes nothing; a killed
import leaves no half conversation; `koroku ask -c <imported title>` continues it with the
imported history in the request (plain user/model text).

The exports are the samples of tests/imports/samples.py, written from public descriptions of
both formats (mitkury/chatgpt-export-parser's docs/chatgpt-data-export-format.md for
ChatGPT, Sinity/polylogue's docs/providers/claude-ai.md for Claude).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini
from tests.imports.samples import (
    chatgpt_branching,
    chatgpt_simple,
    claude_export,
    write_chatgpt_zip,
)


def ok(koroku: Koroku, *args: str) -> str:
    result = koroku.run(*args)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def listed(koroku: Koroku) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(ok(koroku, "conversations", "--json"))
    return found


def events(koroku: Koroku) -> int:
    return int(koroku.sql("SELECT COUNT(*) FROM events")[0][0])  # type: ignore[call-overload]


def test_import_reimport_newer_export_and_a_damaged_file(koroku: Koroku, tmp_path: Path) -> None:
    ok(koroku, "conversations", "new", "Mine")
    export = write_chatgpt_zip(
        tmp_path / "export.zip",
        [chatgpt_branching(), chatgpt_simple("s1", "Simple", [("hi", "hello")])],
    )
    result = koroku.run("import", str(export))
    assert result.returncode == 0, result.stderr
    assert "imported 11 message(s) from ChatGPT: 2 new conversation(s)" in result.stdout
    assert "ChatGPT export with 2 conversation(s)" in result.stderr
    assert "2 of 2 conversations" in result.stderr
    chats = {c["title"]: c for c in listed(koroku)}
    assert chats["Hauptstadt & cubes"]["origin"] == "chatgpt"
    assert chats["Hauptstadt & cubes"]["read_only"] and not chats["Mine"]["read_only"]
    assert chats["Hauptstadt & cubes"]["created_at"].startswith("2023-11-14")
    assert "(from ChatGPT, read-only)" in ok(koroku, "conversations")
    shown = ok(koroku, "history", "--all", "-c", "Hauptstadt & cubes")
    assert "Imported from ChatGPT" in shown and "Berlin ist die Hauptstadt." in shown
    hits = json.loads(ok(koroku, "search", "--all-words", "--json", "Hauptstadt"))
    assert {h["conversation_title"] for h in hits} == {"Hauptstadt & cubes"}

    before = events(koroku)
    again = koroku.run("import", str(export))
    assert again.returncode == 0 and "imported 0 message(s)" in again.stdout, again.stderr
    assert events(koroku) == before

    (tmp_path / "newer").mkdir()
    newer = write_chatgpt_zip(
        tmp_path / "newer" / "export.zip",
        [chatgpt_branching(), chatgpt_simple("s1", "Simple", [("hi", "hello"), ("more?", "yes")])],
    )
    added = koroku.run("import", str(newer))
    assert "imported 2 message(s) from ChatGPT: 0 new conversation(s), 1 updated" in added.stdout
    assert events(koroku) == before + 3  # two messages and the import's marker

    damaged = tmp_path / "conversations.json"
    text = json.dumps([chatgpt_simple("s9", "Nine", [("q", "a")]), chatgpt_branching()])
    damaged.write_text(text[: len(text) // 2])
    refused = koroku.run("import", str(damaged))
    assert refused.returncode == 2, refused.stdout
    assert len(refused.stderr.strip().splitlines()) == 1 and "damaged" in refused.stderr
    assert events(koroku) == before + 3


def test_a_claude_export_is_imported(koroku: Koroku, tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(claude_export(), ensure_ascii=False))
    result = koroku.run("import", str(path))
    assert result.returncode == 0, result.stderr
    assert "from Claude: 2 new conversation(s)" in result.stdout
    assert "1 file(s), 1 named only (shown as missing)" in result.stdout
    chats = {c["title"]: c for c in listed(koroku)}
    assert set(chats) == {"Résumé review ✍️", "Only text field here"}  # no empty one started
    assert chats["Résumé review ✍️"]["origin"] == "claude"
    assert chats["Résumé review ✍️"]["messages"] == 2


def test_a_foreign_file_is_one_line_and_changes_nothing(koroku: Koroku, tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([{"messages": [{"role": "user", "content": "hi"}]}]))
    result = koroku.run("import", str(path))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "ChatGPT's or Claude's data export" in result.stderr


def _whole_chats(koroku: Koroku) -> int:
    """How many chats the log holds; fails unless every one is whole (40 messages, created
    and imported)."""
    per_chat = koroku.sql(
        "SELECT conversation_id, SUM(kind = 'message'), SUM(kind = 'conversation') "
        "FROM events WHERE writer = 'import@chatgpt' GROUP BY conversation_id"
    )
    assert all(row[1:] == (40, 2) for row in per_chat), [r for r in per_chat if r[1:] != (40, 2)]
    return len(per_chat)


KILLED_CHATS = 400
"""Chats of 40 messages in the export a test kills: a second or more of work after the first
chat is in (each is written whole, with its own commit), so the signal lands mid-import."""


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT])
def test_a_killed_import_leaves_no_half_conversation(
    koroku: Koroku, tmp_path: Path, stop: signal.Signals
) -> None:
    chats = [
        chatgpt_simple(f"c{n}", f"Chat {n}", [(f"q{n} {k}", f"a{n} {k}") for k in range(20)])
        for n in range(KILLED_CHATS)
    ]
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chats))
    victim = koroku.popen("import", str(export))
    assert victim.stderr is not None
    assert f"{KILLED_CHATS} conversation(s)" in victim.stderr.readline()  # checked, nothing written
    assert f"1 of {KILLED_CHATS} conversations" in victim.stderr.readline()  # the first chat is in
    os.kill(victim.pid, stop)
    code = victim.wait(timeout=60)
    if stop == signal.SIGINT and code != 0:  # Ctrl-C came before the last chat: said so
        assert code == 130 and "every conversation written so far is whole" in (
            victim.stderr.read()
        )

    whole = _whole_chats(koroku)
    assert whole >= 1
    done = koroku.run("import", str(export), timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{KILLED_CHATS - whole} new conversation(s)" in done.stdout
    imported = koroku.sql("SELECT COUNT(*) FROM events WHERE writer = 'import@chatgpt'")
    assert imported == [(KILLED_CHATS * 42,)]


def test_an_imported_chat_is_continued_with_its_history(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    export = write_chatgpt_zip(tmp_path / "export.zip", [chatgpt_branching()])
    imported = koroku.run("import", str(export))
    assert imported.returncode == 0, imported.stderr
    # With a key the imported history is embedded for search by meaning before it exits.
    assert "embedding for search by meaning:" in imported.stderr
    assert " 0 events waiting" in ok(koroku, "search", "--status")
    fake_gemini.reply_text("About 3.8 million people.")
    answer = ok(koroku, "ask", "-c", "Hauptstadt & cubes", "and its population?")
    assert "3.8 million" in answer
    sent = [r for r in fake_gemini.generate_requests() if "population" in json.dumps(r.contents)]
    contents = sent[-1].contents
    said = json.dumps(contents, ensure_ascii=False)
    assert "Berlin ist die Hauptstadt." in said and "The cubes are 0, 1, 8 and 27." in said
    assert "First try: Berlin." not in said and "plot squares" not in said  # replaced branches
    assert "functionCall" not in said and "functionResponse" not in said
    assert {c["role"] for c in contents} == {"user", "model"}
    assert said.index("Wie heißt") < said.index("Berlin ist") < said.index("population")
    chats = {c["title"]: c for c in listed(koroku)}
    assert not chats["Hauptstadt & cubes"]["read_only"]  # continued: a conversation like any

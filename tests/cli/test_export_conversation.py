"""`koroku export -c NAME|ID` (Markdown and JSON; the default is every conversation) and
`koroku import` of one conversation's JSON export into another data dir that has its own
conversations: it arrives with its title and origin, searchable at once, and importing it
again adds nothing. Real `koroku` subprocesses on real SQLite files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.domain.events import ConversationEvent
from koroku_desktop.store import SqliteEventLog
from tests.support.builders import model, user
from tests.support.processes import Koroku

pytestmark = pytest.mark.slow


def _conversations(home: Path) -> dict[str, str]:
    """The log's first conversation, "Taxes 2026" and a chat imported from ChatGPT."""
    home.mkdir(parents=True, exist_ok=True)
    log = SqliteEventLog(home / "koroku.db")
    try:
        book = ConversationBook(log)
        log.append("default", [user("hello from the first days"), model("hello")])
        taxes = book.create("Taxes 2026")
        log.append(taxes.id, [user("the home office deduction"), model("keep the receipts")])
        chat = book.create("Sourdough", origin="chatgpt")
        log.append(chat.id, [user("how long to proof rye"), model("overnight, cool")])
        log.append(chat.id, [ConversationEvent(action="imported", origin="chatgpt")])
        return {"taxes": taxes.id, "chat": chat.id}
    finally:
        log.close()


def _ok(koroku: Koroku, *args: str) -> None:
    done = koroku.run(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)


def _book(home: Path) -> tuple[SqliteEventLog, ConversationBook]:
    log = SqliteEventLog(home / "koroku.db")
    return log, ConversationBook(log)


def test_export_one_conversation_as_markdown_and_json(koroku: Koroku, tmp_path: Path) -> None:
    ids = _conversations(koroku.home)
    md = koroku.run("export", "-c", "Taxes 2026")
    assert md.returncode == 0, md.stderr
    assert "home office" in md.stdout and "rye" not in md.stdout and "first days" not in md.stdout

    out = tmp_path / "taxes.json"
    done = koroku.run("export", "--format", "json", "-c", ids["taxes"][:8], "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == f"exported 3 event(s) to {out}"
    data = json.loads(out.read_text("utf-8"))
    assert data["scope"] == "conversation"
    assert {e["conversation_id"] for e in data["events"]} == {ids["taxes"]}

    every = json.loads(koroku.run("export", "--format", "json").stdout)
    assert every["scope"] == "all"
    assert {e["conversation_id"] for e in every["events"]} == {"default", *ids.values()}

    unknown = koroku.run("export", "-c", "no such thing")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert len(unknown.stderr.strip().splitlines()) == 1 and "no conversation" in unknown.stderr


def test_a_conversation_export_imports_into_another_data_dir_once(
    koroku: Koroku, tmp_path: Path
) -> None:
    ids = _conversations(koroku.home)
    taxes, chat = tmp_path / "taxes.json", tmp_path / "chat.json"
    _ok(koroku, "export", "--format", "json", "-c", "Taxes 2026", "-o", str(taxes))
    _ok(koroku, "export", "--format", "json", "-c", ids["chat"], "-o", str(chat))

    other = Koroku(tmp_path / "other-home", koroku.workspace)
    other.home.mkdir()
    log, book = _book(other.home)
    try:
        recipes = book.create("Recipes")
        log.append(recipes.id, [user("a bread with rye"), model("use a sourdough")])
    finally:
        log.close()
    home = str(other.home)

    first = other.run("import", str(taxes), KOROKU_HOME=home)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0] == (
        "imported 3 event(s) of 1 conversation(s) from a Koroku export"
    )
    assert other.run("import", str(chat), KOROKU_HOME=home).returncode == 0
    log, book = _book(other.home)
    try:
        count = log.count()
        found = book.all()
        assert found[ids["taxes"]].title == "Taxes 2026" and found[ids["taxes"]].messages == 2
        assert found[ids["chat"]].origin == "chatgpt" and found[ids["chat"]].read_only
        assert found[recipes.id].title == "Recipes"  # its own conversations are untouched
        assert [h.conversation_id for h in log.search("deduction")] == [ids["taxes"]]
    finally:
        log.close()

    again = other.run("import", str(taxes), KOROKU_HOME=home)
    assert again.returncode == 0, again.stderr
    assert "imported 0 event(s)" in again.stdout and "3 already here" in again.stdout
    log, _book2 = _book(other.home)
    try:
        assert log.count() == count
    finally:
        log.close()

    # A whole log's export still goes into an empty data dir only.
    whole = tmp_path / "all.json"
    _ok(koroku, "export", "--format", "json", "-o", str(whole))
    refused = other.run("import", str(whole), KOROKU_HOME=home)
    assert refused.returncode == 1 and "empty data dir" in refused.stderr

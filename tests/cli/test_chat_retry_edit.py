"""`/retry` and `/edit` in `koroku chat` (a real subprocess on a real SQLite file, against the
strict fake Gemini); the replaced turns survive an export and an import."""

from __future__ import annotations

from pathlib import Path

import pytest

from koroku_desktop.domain.context import ContextView
from koroku_desktop.store import SqliteEventLog
from tests.cli.test_recall_commands import Koroku, with_notes
from tests.fakes.gemini_replies import CallsReply, ReceivedRequest, Reply, TextReply, said_text
from tests.fakes.gemini_server import FakeGemini

pytestmark = pytest.mark.slow


def brain(request: ReceivedRequest) -> Reply:
    """Reads the notes for "notes" questions (a signed call), else answers with a count."""
    parts = request.contents[-1].get("parts", [])
    if any("functionResponse" in p for p in parts):
        return TextReply("I read the notes.")
    if "notes" in request.last_text():
        return CallsReply((("read_file", {"path": "notes.txt"}),))
    return TextReply(f"answer to {said_text(parts)!r}")


def person_texts(request: ReceivedRequest) -> list[str]:
    return [
        said_text(c["parts"])
        for c in request.contents
        if c["role"] == "user" and not any("functionResponse" in p for p in c["parts"])
    ]


def live_texts(home: Path) -> list[str]:
    log = SqliteEventLog(home / "koroku.db")
    try:
        live = log.load_live("default")
        view = ContextView.from_tail(live.boundary, live.events, live.unloaded)
        return [said_text([p.model_dump(by_alias=True) for p in c.parts]) for c in view.contents()]
    finally:
        log.close()


@pytest.fixture
def koroku(koroku_home: Path, tmp_path: Path, fake_gemini: FakeGemini) -> Koroku:
    return with_notes(koroku_home, tmp_path, fake_gemini, brain)


def test_retry_and_edit_in_chat_then_export_and_import(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    koroku.ok("ask", "hello")
    chat = koroku.ok("chat", stdin="read the notes\n/retry\n/edit\n/edit say hi\nexit\n")
    assert "usage: /edit" in chat.stderr and "your last message was: read the notes" in chat.stderr
    kinds = koroku.kinds()
    assert kinds.count("superseded") == 2
    last = fake_gemini.generate_requests()[-1]
    assert person_texts(last) == ["hello", "say hi"], "replaced turns are not sent"
    retried = fake_gemini.generate_requests()[-3]  # the regenerated turn's call step
    assert person_texts(retried) == ["hello", "read the notes"]
    assert "answer to 'say hi'" in chat.stdout

    history = koroku.ok("history", "--all").stdout
    assert history.count("you> read the notes") == 2, "both the replaced and the new turn are kept"
    assert "regenerated" in history and "edited and sent again" in history

    export = tmp_path / "export.json"
    koroku.ok("export", "--format", "json", "-o", str(export))
    fresh = Koroku(tmp_path / "fresh-home", koroku.workspace)
    fresh.ok("import", str(export))
    assert fresh.rows() == koroku.rows() and fresh.ids() == koroku.ids()
    assert live_texts(fresh.home) == live_texts(koroku.home)
    assert [t for t in live_texts(fresh.home) if t.startswith(("hello", "say", "read"))] == [
        "hello",
        "say hi",
    ]
    assert fresh.ok("search", "--keyword", "notes").stdout.strip(), "still searchable"


def test_nothing_to_retry_says_so(koroku: Koroku) -> None:
    chat = koroku.ok("chat", stdin="/retry\nexit\n")
    assert "nothing to replace" in chat.stderr
    assert "superseded" not in koroku.kinds()

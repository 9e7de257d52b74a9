"""`koroku chat` as a person reads it (real subprocesses on a real SQLite file, against the
fake Gemini): the history without scaffolding, `/help` answered locally, a failed request in
one friendly line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_recall_commands import Koroku, with_notes
from tests.fakes.gemini_replies import ErrorReply, ReceivedRequest, Reply, TextReply, said_text
from tests.fakes.gemini_server import FakeGemini

pytestmark = pytest.mark.slow


MARKDOWN_ANSWER = "Here are **bold words** and `code`:\n\n- first item\n- second item"


def echo(request: ReceivedRequest) -> Reply:
    """Answers with a Markdown list when asked for one, else echoes the message."""
    said = said_text(request.contents[-1].get("parts", []))
    return TextReply(MARKDOWN_ANSWER if "markdown" in said else f"answer to {said!r}")


@pytest.fixture
def koroku(koroku_home: Path, tmp_path: Path, fake_gemini: FakeGemini) -> Koroku:
    return with_notes(koroku_home, tmp_path, fake_gemini, echo)


def test_history_replay_shows_only_what_the_person_wrote(koroku: Koroku) -> None:
    koroku.ok("ask", "hello there")
    chat = koroku.ok("chat", stdin="exit\n")
    assert "you> hello there" in chat.stdout
    assert "[Koroku:" not in chat.stdout, "the time note is for the model, not the person"
    assert chat.stdout.count("you>") == 2, chat.stdout  # the replayed message and the prompt


def test_a_compaction_summary_is_replayed_as_a_marker(koroku: Koroku) -> None:
    for n in range(3):
        koroku.ok("ask", f"question {n}")
    koroku.ok("compact")
    chat = koroku.ok("chat", stdin="exit\n")
    assert "── Summary of" in chat.stdout, chat.stdout
    replayed = [line for line in chat.stdout.splitlines() if line.startswith("you> ")]
    assert not any("summary" in line.lower() for line in replayed), replayed


def test_help_is_answered_locally(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    before = len(fake_gemini.generate_requests())
    chat = koroku.ok("chat", stdin="/help\nexit\n")
    for command in ("/help", "/retry", "/edit", "/attach", "/clear", "/exit", "/prompts"):
        assert command in chat.stdout, command
    assert len(fake_gemini.generate_requests()) == before, "/help is never sent to the model"


def test_a_failed_request_is_one_friendly_line(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    fake_gemini.set_fallback(lambda _request: ErrorReply(400, "the request was bad"))
    chat = koroku.ok("chat", stdin="hello\nexit\n")
    errors = [
        line for line in chat.stderr.splitlines() if line.strip() and "context left" not in line
    ]
    assert len(errors) == 1 and errors[0].startswith("✗ "), chat.stderr
    assert "WARNING" not in chat.stderr and "koroku_desktop." not in chat.stderr
    assert chat.stdout.count("hello") == 0, "the message is not printed again"
    verbose = koroku.ok("-v", "chat", stdin="hello\nexit\n")
    assert "koroku_desktop.agent.steps" in verbose.stderr, "-v still shows the log records"


def test_a_piped_chat_prints_markdown_as_the_model_wrote_it(koroku: Koroku) -> None:
    chat = koroku.ok("chat", stdin="show me markdown\nexit\n")
    assert f"koroku> {MARKDOWN_ANSWER}\n" in chat.stdout, "no rendering, no escape codes"
    assert "\x1b[" not in chat.stdout

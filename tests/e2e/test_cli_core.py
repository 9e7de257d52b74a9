"""`koroku ask` / `chat` / `history` as a user runs them: real processes, SQLite, fake Gemini."""

from __future__ import annotations

import json
import sqlite3

from koroku_desktop.cli.terminal import NOBODY_TO_ASK
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini


def _responses(request_contents: list[dict[str, object]]) -> list[dict[str, object]]:
    out = []
    for content in request_contents:
        for part in content.get("parts", []):  # type: ignore[attr-defined]
            if "functionResponse" in part:
                out.append(part["functionResponse"])
    return out


def test_ask_prints_only_the_answer_and_remembers_it(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_text("Hello from Koroku.")
    result = koroku.run("ask", "hi", "there")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello from Koroku."
    fake_gemini.reply_text("You said hi.")
    again = koroku.run("ask", "what did I say?")
    assert again.returncode == 0, again.stderr
    sent = fake_gemini.generate_requests()[-1].contents
    assert [c["role"] for c in sent] == ["user", "model", "user"]
    assert sent[0]["parts"][-1]["text"] == "hi there"  # after the time note


def test_ask_reads_stdin_with_dash(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    fake_gemini.reply_text("got it")
    result = koroku.run("ask", "-", stdin="a question from a pipe\n")
    assert result.returncode == 0, result.stderr
    assert fake_gemini.generate_requests()[-1].last_text() == "a question from a pipe"


def test_no_api_key_says_how_to_set_one_and_exits_2(koroku: Koroku) -> None:
    result = koroku.run("ask", "hi")
    assert result.returncode == 2
    assert "koroku login" in result.stderr and "GEMINI_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_usage_exits_2(koroku: Koroku) -> None:
    result = koroku.run("ask")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_tool_call_runs_with_yes_and_response_goes_back(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_calls(("write_file", {"path": "note.txt", "content": "remember milk"}))
    fake_gemini.reply_text("Saved.")
    result = koroku.run("ask", "--yes", "save a note")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Saved."
    assert (koroku.workspace / "note.txt").read_text() == "remember milk"
    assert "✓ write_file" in result.stderr
    responses = _responses(fake_gemini.generate_requests()[-1].contents)
    assert responses and responses[0]["name"] == "write_file"
    assert "error" not in responses[0]["response"]  # type: ignore[operator]


def test_denied_write_leaves_the_file_untouched_and_the_model_is_told(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    target = koroku.workspace / "keep.txt"
    target.write_text("original")
    fake_gemini.reply_calls(("write_file", {"path": "keep.txt", "content": "overwritten"}))
    fake_gemini.reply_text("Understood, I left it alone.")
    result = koroku.run("ask", "overwrite keep.txt")  # no terminal to ask on: not approved
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "original"
    assert f"Koroku wants to run write_file on {target}:" in result.stderr, "the absolute path"
    assert "-original" in result.stderr and "+overwritten" in result.stderr, "the diff"
    assert "nobody could approve it" in result.stderr and "--yes" in result.stderr
    assert "denied by the user" not in result.stderr
    responses = _responses(fake_gemini.generate_requests()[-1].contents)
    assert responses[0]["response"] == {"error": NOBODY_TO_ASK}


def test_tool_budget_stops_an_endless_loop_at_exactly_the_budget(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.endless_calls("bash", {"command": "echo tick >> ticks.txt"})
    result = koroku.run("ask", "--yes", "loop forever", KOROKU_MAX_TOOL_CALLS="4")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "I stopped calling tools. Here is what I did so far."
    assert (koroku.workspace / "ticks.txt").read_text().count("tick") == 4
    last = fake_gemini.generate_requests()[-1]
    assert not last.has_tools
    assert "Do not call any more tools" in last.system_text


def test_503_twice_then_success_gives_the_answer(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    fake_gemini.fail(503, times=2)
    fake_gemini.reply_text("third time lucky")
    result = koroku.run("ask", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "third time lucky"


def test_400_exits_1_with_a_clear_message_and_keeps_the_users_message(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.fail(400, message="Request contains an invalid argument.")
    result = koroku.run("ask", "please keep this message")
    assert result.returncode == 1
    assert "invalid argument" in result.stderr.lower()
    assert "Traceback" not in result.stderr
    assert "test-key" not in result.stderr
    history = koroku.run("history", "--json")
    texts = json.loads(history.stdout)
    assert isinstance(texts, list) and texts[0]["seq"] == 1
    assert any("please keep this message" in json.dumps(t) for t in texts)
    lines = koroku.run("history", "--jsonl", "--all").stdout.splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [t["seq"] for t in texts]


def test_damaged_rows_do_not_stop_history_chat_or_ask(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_text("first")
    assert koroku.run("ask", "one").returncode == 0
    with sqlite3.connect(koroku.home / "koroku.db") as conn:
        conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at) "
            "VALUES ('default', 'message', 1, '{not json', 0)"
        )
        conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at) "
            "VALUES ('default', 'hologram', 1, '{}', 0)"
        )
    history = koroku.run("history", "--all")
    assert history.returncode == 0, history.stderr
    assert history.stdout.count("cannot be read") == 2
    fake_gemini.reply_text("still here")
    ask = koroku.run("ask", "two")
    assert ask.returncode == 0, ask.stderr
    assert ask.stdout.strip() == "still here"
    fake_gemini.reply_text("chatting")
    chat = koroku.run("chat", stdin="three\nexit\n")
    assert chat.returncode == 0, chat.stderr
    assert "chatting" in chat.stdout


def test_chat_replays_history_streams_and_clear_appends_an_event(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_text("earlier answer")
    assert koroku.run("ask", "earlier question").returncode == 0
    fake_gemini.reply_text("a streamed reply in pieces")
    chat = koroku.run("chat", stdin="hello\nclear\nexit\n")
    assert chat.returncode == 0, chat.stderr
    assert "earlier question" in chat.stdout and "earlier answer" in chat.stdout
    assert "a streamed reply in pieces" in chat.stdout
    kinds = [row[0] for row in koroku.sql("SELECT kind FROM events ORDER BY seq")]
    assert kinds[-1] == "cleared"
    assert koroku.sql("SELECT COUNT(*) FROM events WHERE kind='message'")[0][0] == 4


def test_ask_says_when_a_rate_limited_request_is_retried(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.fail(429, retry_delay="0.3s")
    fake_gemini.reply_text("after the wait")
    result = koroku.run("ask", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "after the wait"
    assert "retrying (2 of " in result.stderr

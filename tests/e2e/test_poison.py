"""Inputs that used to poison the conversation (every later request rejected) no longer do."""

from __future__ import annotations

import json
import sqlite3

from koroku_desktop.domain.events import MessageEvent, dump_event
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, TextPart
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_replies import TextReply
from tests.fakes.gemini_server import FakeGemini


def _texts(contents: list[dict[str, object]]) -> str:
    return json.dumps(contents)


def test_reply_of_one_empty_text_part_is_an_error_and_the_next_turn_works(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_parts({"text": ""})
    first = koroku.run("ask", "hello")
    assert first.returncode == 1
    assert "empty reply" in first.stderr and "Traceback" not in first.stderr
    fake_gemini.reply_text("back to normal")
    second = koroku.run("ask", "hello again")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "back to normal"


def test_stored_empty_reply_and_orphan_call_are_fixed_in_the_request(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    """A log holding what the fake rejects (as older versions and bad imports wrote it)."""
    fake_gemini.reply_text("first answer")
    assert koroku.run("ask", "one").returncode == 0
    planted = [
        MessageEvent(role="user", origin="person", parts=[TextPart(text="two")]),
        MessageEvent(role="model", origin="model", parts=[TextPart(text="")]),
        MessageEvent(role="user", origin="person", parts=[TextPart(text="three")]),
        MessageEvent(
            role="model", parts=[FunctionCallPart(name="bash", id="c1", args={"command": "ls"})]
        ),
        MessageEvent(role="user", origin="person", parts=[TextPart(text="four")]),
        MessageEvent(role="user", parts=[FunctionResponsePart(name="bash", id="zz", response={})]),
    ]
    with sqlite3.connect(koroku.home / "koroku.db") as conn:
        for event in planted:
            conn.execute(
                "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
                " VALUES ('default', 'message', 1, ?, 0)",
                (json.dumps(dump_event(event)),),
            )
    fake_gemini.reply_text("accepted")
    result = koroku.run("-v", "ask", "five")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "accepted"
    assert "request fixed at seq" in result.stderr
    sent = fake_gemini.generate_requests()[-1].contents
    texts = _texts(sent)
    assert "two" in texts and "three" in texts and "four" in texts and "five" in texts
    # The log itself is unchanged: the planted rows are still there.
    assert koroku.sql("SELECT COUNT(*) FROM events WHERE payload LIKE '%\"zz\"%'")[0][0] == 1


def test_message_too_large_for_the_model_is_set_aside_and_the_next_turn_works(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.max_input_tokens = 3_000
    huge = "lorem ipsum " * 2_000
    first = koroku.run("ask", "-", stdin=huge)
    assert first.returncode == 1
    assert "exceeds the maximum number of tokens" in first.stderr
    assert "set aside" in first.stderr and "Attach it as a file" in first.stderr
    assert "Traceback" not in first.stderr
    fake_gemini.reply_text("small answer")
    second = koroku.run("ask", "a small question")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "small answer"
    assert "lorem" not in _texts(fake_gemini.generate_requests()[-1].contents)
    kinds = [k for (k,) in koroku.sql("SELECT kind FROM events ORDER BY seq")]
    assert "rejected" in kinds
    history = koroku.run("history", "--all")
    assert "set aside" in history.stdout and "lorem" in history.stdout


def test_answer_cut_off_by_max_tokens_says_so_on_stderr(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.script(TextReply("The first half of the ans", finish_reason="MAX_TOKENS"))
    result = koroku.run("ask", "tell me everything")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The first half of the ans"
    assert "incomplete" in result.stderr and "MAX_TOKENS" in result.stderr
    stored = koroku.sql("SELECT payload FROM events WHERE payload LIKE '%finish_reason%'")
    assert json.loads(str(stored[-1][0]))["finish_reason"] == "MAX_TOKENS"

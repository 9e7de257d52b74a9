"""Nothing is lost across restarts and crashes: exact signatures, dangling calls repaired."""

from __future__ import annotations

import base64
import os
import sqlite3
from typing import Any

from tests.e2e.conftest import Koroku, sigkill_during_a_bash_call
from tests.fakes.gemini_server import FakeGemini


def _sig(n: int) -> tuple[bytes, str]:
    raw = os.urandom(32 + n)
    return raw, base64.b64encode(raw).decode()


def _decode(value: str) -> bytes:
    return base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_") + "==")


def _model_contents(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in contents if c["role"] == "model"]


def test_every_part_kind_survives_a_new_process_with_byte_identical_signatures(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    sigs = [_sig(i) for i in range(4)]
    (koroku.workspace / "a.txt").write_text("alpha")
    fake_gemini.reply_parts(
        {"text": "Let me think.", "thought": True, "thoughtSignature": sigs[0][1]},
        {"text": "Some code:", "thoughtSignature": sigs[1][1]},
        {"executableCode": {"language": "PYTHON", "code": "print(6*7)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
        {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(b"\x89PNG").decode()}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.invalid/f"}},
        {
            "functionCall": {"name": "read_file", "args": {"path": "a.txt"}, "id": "call-1"},
            "thoughtSignature": sigs[2][1],
        },
    )
    fake_gemini.reply_parts({"text": "The file says alpha.", "thoughtSignature": sigs[3][1]})
    first = koroku.run("ask", "read a.txt")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "The file says alpha."

    fake_gemini.reply_text("second process here")
    second = koroku.run("ask", "and now?")  # a new process, history from SQLite
    assert second.returncode == 0, second.stderr
    sent = fake_gemini.generate_requests()[-1].contents
    models = _model_contents(sent)
    assert len(models) == 2
    parts = models[0]["parts"]
    assert [next(k for k in p if k != "thoughtSignature") for p in parts] == [
        "text",
        "text",
        "executableCode",
        "codeExecutionResult",
        "inlineData",
        "fileData",
        "functionCall",
    ]
    assert parts[0]["thought"] is True
    assert _decode(parts[0]["thoughtSignature"]) == sigs[0][0]
    assert _decode(parts[1]["thoughtSignature"]) == sigs[1][0]
    assert _decode(parts[6]["thoughtSignature"]) == sigs[2][0]
    assert "thoughtSignature" not in parts[2]
    assert parts[6]["functionCall"]["id"] == "call-1"
    assert _decode(models[1]["parts"][0]["thoughtSignature"]) == sigs[3][0]
    responses = [p["functionResponse"] for c in sent for p in c["parts"] if "functionResponse" in p]
    assert responses[0]["id"] == "call-1"
    assert responses[0]["response"]["content"] == "alpha"


def test_a_second_process_continues_a_conversation_with_parallel_tool_calls(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    (koroku.workspace / "x.txt").write_text("x")
    fake_gemini.reply_calls(("read_file", {"path": "x.txt"}), ("bash", {"command": "echo hi"}))
    fake_gemini.reply_calls(("bash", {"command": "echo again"}))
    fake_gemini.reply_text("done")
    assert koroku.run("ask", "--yes", "do things").returncode == 0
    fake_gemini.reply_text("continued")
    result = koroku.run("ask", "continue")
    assert result.returncode == 0, result.stderr  # the strict fake accepted the history
    assert result.stdout.strip() == "continued"


def test_sigkill_during_a_bash_call_is_repaired_on_the_next_ask(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    sigkill_during_a_bash_call(koroku, fake_gemini, "run the slow thing")
    fake_gemini.reply_text("recovered")
    result = koroku.run("ask", "are you there?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "recovered"
    sent = fake_gemini.generate_requests()[-1].contents
    responses = [p["functionResponse"] for c in sent for p in c["parts"] if "functionResponse" in p]
    assert responses and "interrupted" in responses[0]["response"]["error"]
    with sqlite3.connect(koroku.home / "koroku.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        origins = [
            row[0]
            for row in conn.execute(
                "SELECT json_extract(payload, '$.origin') FROM events ORDER BY seq"
            )
        ]
    assert "repair" in origins

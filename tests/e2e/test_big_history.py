"""A long uncompacted history: the next turn sends only recent turns, then it is compacted."""

from __future__ import annotations

import json
from pathlib import Path

from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_replies import ReceivedRequest, Reply, TextReply
from tests.fakes.gemini_server import FakeGemini

EVENTS = 240


def _export(path: Path) -> None:
    events = []
    for seq in range(1, EVENTS + 1):
        role = "user" if seq % 2 else "model"
        text = f"message {seq}: " + "words " * 400
        payload = {"kind": "message", "role": role, "parts": [{"kind": "text", "text": text}]}
        events.append(
            {
                "seq": seq,
                "conversation_id": "default",
                "kind": "message",
                "schema_version": 1,
                "created_at": 1_700_000_000.0 + seq,
                "payload": payload,
            }
        )
    body = {"format": "koroku-export", "version": 1, "scope": "all", "exported_at": 0}
    path.write_text(json.dumps({**body, "events": events}))


def _brain(request: ReceivedRequest) -> Reply:
    if request.system_text == SUMMARIZER_INSTRUCTION:
        return TextReply("SUMMARY of the imported history.")
    return TextReply("answer from the recent part")


def test_first_ask_sends_recent_turns_then_compacts_with_progress(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    export = tmp_path / "long.json"
    _export(export)
    imported = koroku.run("import", str(export), GEMINI_API_KEY="")
    assert imported.returncode == 0, imported.stderr
    assert "compacted after the next turn" in imported.stderr
    fake_gemini.set_fallback(_brain)
    ask = koroku.run("ask", "what now?", KOROKU_COMPACT_AT_TOKENS="20000")
    assert ask.returncode == 0, ask.stderr
    assert ask.stdout.strip() == "answer from the recent part"
    first = fake_gemini.generate_requests()[0]
    assert first.system_text != SUMMARIZER_INSTRUCTION
    assert len(first.contents) < EVENTS // 3  # only the most recent turns that fit
    assert first.last_text() == "what now?"
    summaries = [
        r for r in fake_gemini.generate_requests() if r.system_text == SUMMARIZER_INSTRUCTION
    ]
    assert len(summaries) >= 2 and "part 1 of" in ask.stderr
    kinds = [k for (k,) in koroku.sql("SELECT kind FROM events ORDER BY seq")]
    assert kinds[-1] == "compaction"
    fake_gemini.set_fallback(_brain)
    again = koroku.run("ask", "and now?", KOROKU_COMPACT_AT_TOKENS="20000")
    assert again.returncode == 0, again.stderr
    latest = fake_gemini.generate_requests()[-1]
    assert "SUMMARY of the imported history." in json.dumps(latest.contents[0])

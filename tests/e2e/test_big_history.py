"""A long uncompacted history: the next turn sends only recent turns, then it is compacted."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from tests.e2e.conftest import Koroku
from tests.fakes.gemini_replies import ReceivedRequest, Reply, TextReply
from tests.fakes.gemini_server import FakeGemini

EVENTS = 240
GUARD_S = 60  # only so that a deadlock fails the test instead of hanging it


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
    assert kinds[-2:] == ["compaction", "memory_edit"]  # the summary and its memory-file entry
    fake_gemini.set_fallback(_brain)
    again = koroku.run("ask", "and now?", KOROKU_COMPACT_AT_TOKENS="20000")
    assert again.returncode == 0, again.stderr
    latest = fake_gemini.generate_requests()[-1]
    assert "SUMMARY of the imported history." in json.dumps(latest.contents[0])


def _import_with_a_gated_summariser(
    koroku: Koroku, fake: FakeGemini, tmp_path: Path, summary: str, answer: str | None
) -> tuple[threading.Event, threading.Event]:
    """Import a long history, then make the fake's summariser wait for `gate` (it sets
    `summarising` when it starts); other requests get `answer` (None: "answer to <text>")."""
    export = tmp_path / "long.json"
    _export(export)
    assert koroku.run("import", str(export), GEMINI_API_KEY="").returncode == 0
    summarising, gate = threading.Event(), threading.Event()

    def gated_brain(request: ReceivedRequest) -> Reply:
        if request.system_text == SUMMARIZER_INSTRUCTION:
            summarising.set()
            gate.wait(GUARD_S)  # the compacting `ask` waits until the test lets it go
            return TextReply(summary)
        return TextReply(answer if answer is not None else f"answer to {request.last_text()}")

    fake.set_fallback(gated_brain)
    return summarising, gate


def test_another_ask_runs_while_the_first_compacts_and_stays_live(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    summarising, gate = _import_with_a_gated_summariser(
        koroku, fake_gemini, tmp_path, "SUMMARY of the imported history.", None
    )
    first = koroku.popen("ask", "what now?", KOROKU_COMPACT_AT_TOKENS="20000")
    try:
        assert summarising.wait(GUARD_S), "the first ask never started compacting"
        # Another process's turn gets the lease while the summariser is stuck.
        second = koroku.run("ask", "meanwhile?", KOROKU_COMPACT_AT_TOKENS="20000")
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == "answer to meanwhile?"
        assert "is compacting it" in second.stderr  # it left the compaction to the first
        assert not koroku.sql("SELECT seq FROM events WHERE kind = 'compaction'")
    finally:
        gate.set()
        out, err = first.communicate(timeout=GUARD_S)
    assert first.returncode == 0, err
    assert out.strip() == "answer to what now?" and "compacting the history" in err
    ((seq, payload),) = koroku.sql("SELECT seq, payload FROM events WHERE kind = 'compaction'")
    ((meanwhile,),) = koroku.sql(
        "SELECT seq FROM events WHERE kind = 'message' AND payload LIKE '%meanwhile?%'"
        " ORDER BY seq LIMIT 1"
    )
    assert json.loads(str(payload))["kept_from_seq"] <= int(str(meanwhile)) < int(str(seq))
    fake_gemini.set_fallback(_brain)
    again = koroku.run("ask", "and now?", KOROKU_COMPACT_AT_TOKENS="20000")
    assert again.returncode == 0, again.stderr
    sent = json.dumps(fake_gemini.generate_requests()[-1].contents)
    assert "SUMMARY of the imported history." in sent and "meanwhile?" in sent


def test_ctrl_c_during_the_compaction_after_ask_writes_nothing_and_the_next_ask_redoes_it(
    koroku: Koroku, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    summarising, gate = _import_with_a_gated_summariser(
        koroku, fake_gemini, tmp_path, "SUMMARY too late", "answer from the recent part"
    )
    first = koroku.popen("ask", "what now?", KOROKU_COMPACT_AT_TOKENS="20000")
    try:
        assert summarising.wait(GUARD_S), "the ask never started compacting"
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=GUARD_S)
    finally:
        gate.set()
    assert first.returncode == 130, err
    assert out.strip() == "answer from the recent part"  # the answer was out before
    assert "Traceback" not in err
    kinds = [k for (k,) in koroku.sql("SELECT kind FROM events ORDER BY seq")]
    assert "compaction" not in kinds and kinds[-1] == "message"
    assert not koroku.sql("SELECT * FROM turn_leases")  # both leases given back

    fake_gemini.set_fallback(_brain)
    again = koroku.run("ask", "and now?", KOROKU_COMPACT_AT_TOKENS="20000")
    assert again.returncode == 0, again.stderr
    last = koroku.sql("SELECT kind FROM events ORDER BY seq DESC LIMIT 2")
    assert last == [("memory_edit",), ("compaction",)]

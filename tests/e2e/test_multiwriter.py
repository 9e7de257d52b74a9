"""One memory, many writers: real `koroku` processes on one data dir take turns, never
interleave, never repair a live call, and see each other's turns and compactions."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from typing import IO, Any

import pytest

from koroku_desktop.agent.summarizer import SUMMARIZER_INSTRUCTION
from tests.e2e.conftest import Koroku, sigkill_during_a_bash_call, wait_for
from tests.fakes.gemini_replies import CallsReply, ReceivedRequest, Reply, TextReply, said_text
from tests.fakes.gemini_server import FakeGemini


def question_of(request: ReceivedRequest) -> str:
    """The text of the last real user message in a request (what this turn answers)."""
    for content in reversed(request.contents):
        parts = content.get("parts", [])
        if content.get("role") == "user" and not any("functionResponse" in p for p in parts):
            return said_text(parts)
    return ""


def answers(*, tools: bool) -> Any:
    """Q<k> -> A<k>; with tools, Q<k> first runs `echo <k>` and answers after its result."""

    def reply(request: ReceivedRequest) -> Reply:
        question = question_of(request)
        last = request.contents[-1].get("parts", [])
        if tools and not any("functionResponse" in p for p in last):
            return CallsReply((("bash", {"command": f"echo tool-{question}"}),))
        return TextReply("A" + question[1:])

    return reply


def message_rows(koroku: Koroku) -> list[tuple[str, str, str, str]]:
    """(role, origin, turn_id, text or part kinds) of every message, in seq order."""
    out = []
    for payload, turn_id in koroku.sql(
        "SELECT payload, turn_id FROM events WHERE kind = 'message' ORDER BY seq"
    ):
        data = json.loads(str(payload))
        text = said_text(data["parts"]) or ",".join(p["kind"] for p in data["parts"])
        out.append((data["role"], str(data.get("origin")), str(turn_id), text))
    return out


@pytest.mark.parametrize("tools", [False, True], ids=["text", "tool-chains"])
def test_six_concurrent_asks_store_whole_turns_in_one_order(
    koroku: Koroku, fake_gemini: FakeGemini, tools: bool
) -> None:
    fake_gemini.set_fallback(answers(tools=tools))
    procs = [koroku.popen("ask", "--yes", f"Q{k}") for k in range(6)]
    outputs = [p.communicate(timeout=240) for p in procs]
    for k, (proc, (out, err)) in enumerate(zip(procs, outputs, strict=True)):
        assert proc.returncode == 0, err
        assert out.strip() == f"A{k}"
    rows = message_rows(koroku)
    per_turn = 4 if tools else 2
    assert len(rows) == 6 * per_turn
    asked = []
    for start in range(0, len(rows), per_turn):
        turn = rows[start : start + per_turn]
        question = turn[0][3]
        asked.append(question)
        assert turn[0][:2] == ("user", "person")
        assert turn[-1][:2] == ("model", "model") and turn[-1][3] == "A" + question[1:]
        if tools:
            assert [r[1] for r in turn] == ["person", "model", "tools", "model"]
        assert len({r[2] for r in turn}) == 1, "one turn id for the whole turn"
    assert sorted(asked) == [f"Q{k}" for k in range(6)]
    assert all(r[1] != "repair" for r in rows), "no live call was 'repaired'"
    fake_gemini.set_fallback(TextReply("still fine"))
    after = koroku.run("ask", "and now?")
    assert after.returncode == 0, after.stderr  # the strict fake accepts the whole history
    assert after.stdout.strip() == "still fine"


def test_an_ask_during_a_tool_call_waits_and_neither_turn_is_split(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    started, release = koroku.workspace / "started", koroku.workspace / "release"
    # The tool runs until the test says so: the second ask surely comes during the call.
    wait = f"touch {started}; while [ ! -e {release} ]; do sleep 0.05; done; echo slept"
    fake_gemini.reply_calls(("bash", {"command": wait}))
    fake_gemini.reply_text("slow done")
    fake_gemini.reply_text("quick done")
    slow = koroku.popen("ask", "--yes", "run the slow thing")
    try:
        wait_for(started)
        busy = koroku.run("ask", "--no-wait", "are you free?")
        assert busy.returncode == 3
        assert f"a turn is running in the terminal (pid {slow.pid})" in busy.stderr
        quick = koroku.popen("ask", "quick question")
        assert quick.stderr is not None
        notice = quick.stderr.readline()  # blocks until the waiting notice (or the end)
        assert notice.strip() == f"waiting for the turn running in the terminal (pid {slow.pid})..."
        assert quick.poll() is None, "it waits instead of running its turn"
    finally:
        release.touch()
    slow_out, slow_err = slow.communicate(timeout=60)
    assert slow.returncode == 0, slow_err
    assert slow_out.strip() == "slow done"
    quick_out, quick_err = quick.communicate(timeout=60)
    assert quick.returncode == 0, quick_err
    assert quick_out.strip() == "quick done"
    rows = message_rows(koroku)
    assert [r[1] for r in rows] == ["person", "model", "tools", "model", "person", "model"]
    assert rows[4][3] == "quick question"
    responses = [p for c in fake_gemini.generate_requests()[-1].contents for p in c["parts"]]
    outputs = [p["functionResponse"]["response"] for p in responses if "functionResponse" in p]
    assert len(outputs) == 1 and "error" not in outputs[0], "the real result, not a repair"
    fake_gemini.reply_text("next")
    after = koroku.run("ask", "next one")
    assert after.returncode == 0, after.stderr  # the conversation was not poisoned
    assert after.stdout.strip() == "next"


def test_a_sigkilled_lock_owner_does_not_block_the_next_turn(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    sigkill_during_a_bash_call(koroku, fake_gemini, "hang")
    fake_gemini.reply_text("recovered")
    after = koroku.run("ask", "are you there?", timeout=60)
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "recovered"
    origins = [r[1] for r in message_rows(koroku)]
    assert origins == ["person", "model", "repair", "person", "model"]


def test_a_lease_left_by_a_crashed_machine_expires(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    """A lease row of another machine (its pid cannot be checked) holds the turn until it
    expires. The row is written with a far expiry and expired only once `ask` says it waits,
    so a slow start of `ask` cannot find it already expired."""
    assert koroku.run("history").returncode == 0  # creates the database
    with sqlite3.connect(koroku.home / "koroku.db") as conn:
        conn.execute(
            "INSERT INTO turn_leases VALUES ('default', 'gone', 'ask', 'other-machine', 4242,"
            " 't', 0, ?)",
            (time.time() + 600,),
        )
    fake_gemini.reply_text("after the lease")
    asking = koroku.popen("ask", "hello")
    try:
        assert asking.stderr is not None
        notice = asking.stderr.readline()  # blocks until the waiting notice (or the end)
        assert notice.strip() == "waiting for the turn running in the terminal (pid 4242)..."
        assert asking.poll() is None, "ask went on while the lease was held"
        with sqlite3.connect(koroku.home / "koroku.db") as conn:
            conn.execute(
                "UPDATE turn_leases SET expires_at = ? WHERE owner = 'gone'", (time.time(),)
            )
        out, err = asking.communicate(timeout=60)
    finally:
        if asking.poll() is None:
            asking.kill()
            asking.communicate()
    assert asking.returncode == 0, err
    assert out.strip() == "after the lease"


class Repl:
    """A `koroku chat` process fed line by line; its stdout collected by a thread."""

    def __init__(self, koroku: Koroku) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "koroku_desktop", "chat"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=koroku.env(),
            cwd=koroku.workspace,
        )
        self.lines: list[str] = []
        self.errors: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, args=(stream, into), daemon=True)
            for stream, into in ((self.proc.stdout, self.lines), (self.proc.stderr, self.errors))
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: IO[str] | None, into: list[str]) -> None:
        assert stream is not None
        for line in stream:
            into.append(line)

    def say(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"{text!r} never shown; output: {''.join(self.lines)}")
            time.sleep(0.05)

    def close(self) -> None:
        """Leave the chat and wait for it; the readers end with its output (nothing else
        reads or closes the pipes under them)."""
        self.say("exit")
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for reader in self._readers:
            reader.join(timeout=10)


def _texts(request: ReceivedRequest) -> list[str]:
    return [said_text(c.get("parts", [])) for c in request.contents]


def test_a_chat_repl_sees_another_process_turn_and_its_compaction(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    def reply(request: ReceivedRequest) -> Reply:
        if request.system_text == SUMMARIZER_INSTRUCTION:
            return TextReply("SUMMARY-OF-OLD-TURNS")
        return TextReply("A-" + question_of(request))

    fake_gemini.set_fallback(reply)
    repl = Repl(koroku)
    try:
        repl.say("first")
        repl.wait_for("A-first")
        asked = koroku.run("ask", "from-the-terminal")
        assert asked.returncode == 0, asked.stderr
        repl.say("middle")
        repl.wait_for("A-middle")
        sent = _texts(fake_gemini.generate_requests()[-1])
        assert sent == ["first", "A-first", "from-the-terminal", "A-from-the-terminal", "middle"]
        assert any("you> from-the-terminal" in line for line in repl.lines), "shown as well"

        third = koroku.run("ask", "third")
        assert third.returncode == 0, third.stderr
        compacted = koroku.run("compact")
        assert compacted.returncode == 0, compacted.stderr
        assert "compacted" in compacted.stdout
        repl.say("after")
        repl.wait_for("A-after")
        repl.wait_for("(the conversation was compacted elsewhere)")
        request = [r for r in fake_gemini.generate_requests() if question_of(r) == "after"][-1]
        sent = _texts(request)
        assert "SUMMARY-OF-OLD-TURNS" in sent[0], "the compaction made elsewhere is used"
        assert "first" not in sent, "the compacted turns are no longer sent"
        assert sent[-3:] == ["third", "A-third", "after"]
    finally:
        repl.close()

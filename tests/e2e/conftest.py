"""End-to-end helpers: the real `koroku` command in a subprocess against the fake server (`Koroku`
and the `koroku` fixture are the tests/support plugin's, importable from here as before)."""

from __future__ import annotations

import contextlib
import os
import signal

from tests.fakes.gemini_server import FakeGemini
from tests.support.processes import ROOT, Koroku, wait_for

__all__ = ["ROOT", "Koroku", "sigkill_during_a_bash_call", "wait_for"]


def sigkill_during_a_bash_call(koroku: Koroku, fake: FakeGemini, question: str) -> None:
    """Run `ask --yes question` whose bash call hangs, SIGKILL it inside the call, and kill the
    orphaned shell too: the log is left with a call that has no response, as after a crash."""
    started = koroku.workspace / "started"
    pid_file = koroku.workspace / "sleep.pid"
    fake.reply_calls(("bash", {"command": f"echo $$ > {pid_file}; touch {started}; sleep 60"}))
    victim = koroku.popen("ask", "--yes", question)
    try:
        wait_for(started)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
    finally:
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError, ValueError, PermissionError):
                os.killpg(int(pid_file.read_text().strip()), signal.SIGKILL)

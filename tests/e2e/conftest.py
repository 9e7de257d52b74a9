"""End-to-end helpers: run the real `koroku` command in a subprocess against the fake server."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.fixtures import fake_gemini  # noqa: F401  (re-exported fixture)
from tests.fakes.gemini_server import FakeGemini

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Koroku:
    """Runs `python -m koroku_desktop ...` with this test's data dir and environment."""

    home: Path
    workspace: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env["KOROKU_WORKSPACE"] = str(self.workspace)
        env["PYTHONPATH"] = str(ROOT)
        env.update(extra)
        return env

    def run(
        self, *args: str, stdin: str = "", timeout: float = 60, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "koroku_desktop", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(**env),
            cwd=self.workspace,
            check=False,
        )

    def popen(self, *args: str, **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "koroku_desktop", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(**env),
            cwd=self.workspace,
        )

    def sql(self, query: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with sqlite3.connect(self.home / "koroku.db") as conn:
            return list(conn.execute(query, params))


@pytest.fixture
def koroku(koroku_home: Path, tmp_path: Path) -> Koroku:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return Koroku(koroku_home, workspace)


def wait_for(path: Path, timeout: float = 60) -> None:
    """Wait until `path` exists (a subprocess's sign that it got somewhere)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.05)


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

"""`koroku chat` on a real terminal (tmux, its own server socket per test): another process's
turn appears above the prompt while idle, `/he` completes to `/help`, history and Alt+Enter."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli.test_chat_reads_like_a_conversation import echo
from tests.cli.test_recall_commands import ROOT, Koroku, with_notes
from tests.fakes.gemini_replies import CallsReply, ReceivedRequest, Reply, TextReply
from tests.fakes.gemini_server import FakeGemini

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


class Pane:
    """One `koroku chat` in a detached tmux session on a private socket."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "chat")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "chat", *keys)

    def wait(self, check: Callable[[str], bool], what: str, timeout: float = 40) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} never appeared; the screen:\n{screen}")
            time.sleep(0.1)  # polling a condition, not waiting a fixed time


def prompt_line(screen: str) -> str:
    """The last non-empty line: the one the prompt sits on."""
    lines = [line for line in screen.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@pytest.fixture
def koroku(koroku_home: Path, tmp_path: Path, fake_gemini: FakeGemini) -> Koroku:
    return with_notes(koroku_home, tmp_path, fake_gemini, echo)


@pytest.fixture
def pane(koroku: Koroku, tmp_path: Path) -> Iterator[Pane]:
    env = dict(os.environ)
    env.update(
        KOROKU_HOME=str(koroku.home), KOROKU_WORKSPACE=str(koroku.workspace), PYTHONPATH=str(ROOT)
    )
    exports = " ".join(
        f"{k}={shlex.quote(v)}"
        for k, v in env.items()
        if k.startswith(("KOROKU_", "GEMINI_", "GOOGLE_", "PYTHON", "PATH", "HOME"))
    )
    command = f"cd {shlex.quote(str(koroku.workspace))} && env TERM=xterm-256color {exports} "
    command += f"{shlex.quote(sys.executable)} -m koroku_desktop chat; sleep 30"
    pane = Pane(tmp_path / "tmux.sock")
    pane.tmux("new-session", "-d", "-s", "chat", "-x", "110", "-y", "40", command)
    try:
        yield pane
    finally:
        subprocess.run(["tmux", "-S", str(pane.socket), "kill-server"], check=False)


def test_another_turn_appears_above_the_idle_prompt_and_commands_complete(
    koroku: Koroku, pane: Pane
) -> None:
    pane.wait(lambda s: prompt_line(s).startswith("you>"), "the prompt")

    koroku.ok("ask", "from another terminal")
    screen = pane.wait(lambda s: "answer to 'from another terminal'" in s, "the other turn")
    assert "you> from another terminal" in screen
    assert prompt_line(screen).startswith("you>"), "the prompt stays below what was printed"
    lines = screen.splitlines()
    answer_at = max(i for i, line in enumerate(lines) if "answer to 'from another" in line)
    prompt_at = max(i for i, line in enumerate(lines) if line.startswith("you>"))
    assert answer_at < prompt_at, "printed above the prompt, not after the next message"

    pane.keys("/he")
    pane.wait(lambda s: "/help" in s, "the completion menu")
    pane.keys("Tab")
    pane.wait(lambda s: "you> /help" in s, "/he completed")
    pane.keys("Enter")
    pane.wait(lambda s: "Anything else is sent to Koroku" in s, "the help")

    pane.keys("first line", "Escape", "Enter", "second line", "Enter")
    pane.wait(lambda s: "answer to 'first line" in s, "the two-line message's answer")
    pane.keys("exit", "Enter")
    history = (koroku.home / "chat_history").read_text(encoding="utf-8")
    assert "+/help" in history and "+first line" in history and "+second line" in history


def test_a_markdown_answer_is_rendered_on_the_terminal(pane: Pane) -> None:
    pane.wait(lambda s: prompt_line(s).startswith("you>"), "the prompt")
    pane.keys("show me markdown", "Enter")
    screen = pane.wait(lambda s: "second item" in s and prompt_line(s).startswith("you>"), "it")
    assert "Here are bold words and code:" in screen, "bold and code drawn, not marked up"
    assert "**" not in screen and "`code`" not in screen
    assert "• first item" in screen and "• second item" in screen


def editor(request: ReceivedRequest) -> Reply:
    """Edits notes.txt when asked to, then says it did."""
    parts = request.contents[-1].get("parts", [])
    if any("functionResponse" in p for p in parts):
        return TextReply("Edited.")
    if "edit" in request.last_text():
        return CallsReply(
            (("edit_file", {"path": "notes.txt", "old_str": "buy milk", "new_str": "buy tea"}),)
        )
    return echo(request)


def test_an_approval_shows_the_diff_and_the_absolute_path(
    koroku: Koroku, pane: Pane, fake_gemini: FakeGemini
) -> None:
    fake_gemini.set_fallback(editor)
    pane.wait(lambda s: prompt_line(s).startswith("you>"), "the prompt")
    pane.keys("edit the notes", "Enter")
    notes = koroku.workspace / "notes.txt"
    screen = pane.wait(lambda s: "Allow?" in prompt_line(s), "the approval question")
    assert f"Koroku wants to run edit_file on {notes}:" in screen
    assert "-notes: buy milk" in screen and "+notes: buy tea" in screen
    assert '"old_str"' not in screen, "the diff, not the raw JSON"
    pane.keys("y", "Enter")
    pane.wait(lambda s: "koroku> Edited." in s, "the answer after the edit")
    assert notes.read_text(encoding="utf-8") == "notes: buy tea\n"

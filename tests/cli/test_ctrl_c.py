"""Ctrl-C on a real terminal (tmux): it stops a `koroku chat` answer or approval question and
the prompt comes back with every key typed next; at the approval question of `koroku ask` it
ends the process at once; at the prompt it clears the line, and on an empty one leaves."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli.test_chat_prompt_terminal import Pane, editor, prompt_line, pytestmark
from tests.cli.test_recall_commands import ROOT, Koroku, with_notes
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.conftest import everything_entry, write_config

__all__ = ["pytestmark"]  # (tmux needed; slow)

Run = Callable[[str], Pane]


@pytest.fixture
def koroku(koroku_home: Path, tmp_path: Path, fake_gemini: FakeGemini) -> Koroku:
    return with_notes(koroku_home, tmp_path, fake_gemini, editor)


@pytest.fixture
def run(koroku: Koroku, tmp_path: Path) -> Iterator[Run]:
    """Start `koroku ARGS` in a tmux pane; the shell then says how it ended (`EXIT=n`)."""
    panes: list[Pane] = []
    env = dict(os.environ)
    env.update(
        KOROKU_HOME=str(koroku.home), KOROKU_WORKSPACE=str(koroku.workspace), PYTHONPATH=str(ROOT)
    )
    exports = " ".join(
        f"{k}={shlex.quote(v)}"
        for k, v in env.items()
        if k.startswith(("KOROKU_", "GEMINI_", "GOOGLE_", "PYTHON", "PATH", "HOME"))
    )

    def start(args: str) -> Pane:
        command = f"cd {shlex.quote(str(koroku.workspace))} && env TERM=xterm-256color "
        command += f"{exports} {shlex.quote(sys.executable)} -m koroku_desktop {args}; "
        command += "echo EXIT=$?; sleep 60"
        pane = Pane(tmp_path / f"tmux{len(panes)}.sock")
        pane.tmux("new-session", "-d", "-s", "chat", "-x", "110", "-y", "40", command)
        panes.append(pane)
        return pane

    try:
        yield start
    finally:
        for pane in panes:
            subprocess.run(["tmux", "-S", str(pane.socket), "kill-server"], check=False)


def at_prompt(screen: str) -> bool:
    return prompt_line(screen).startswith("you>")


def test_ctrl_c_at_chats_approval_stops_the_turn_and_the_next_line_is_whole(
    koroku: Koroku, run: Run
) -> None:
    pane = run("chat")
    pane.wait(at_prompt, "the prompt")
    pane.keys("edit the notes", "Enter")
    pane.wait(lambda s: "Allow?" in prompt_line(s), "the approval question")
    pane.keys("C-c")
    screen = pane.wait(lambda s: "(stopped)" in s and at_prompt(s), "the prompt after Ctrl-C")
    assert "EXIT=" not in screen, "Ctrl-C stopped the turn, not the chat"
    pane.keys("hello there", "Enter")
    pane.wait(lambda s: "answer to 'hello there'" in s, "the whole next line answered")
    assert (koroku.workspace / "notes.txt").read_text(encoding="utf-8") == "notes: buy milk\n"
    pane.keys("exit", "Enter")
    pane.wait(lambda s: "EXIT=0" in s, "chat leaving")


def test_ctrl_c_stops_a_slow_answer_and_a_second_message_is_answered(
    run: Run, fake_gemini: FakeGemini
) -> None:
    pane = run("chat")
    pane.wait(at_prompt, "the prompt")
    fake_gemini.delay(60)
    pane.keys("take your time", "Enter")
    asked = lambda _: any("take your time" in r.last_text() for r in fake_gemini.requests)  # noqa: E731
    pane.wait(asked, "the model asked (it answers in a minute)")
    pane.keys("C-c")
    screen = pane.wait(lambda s: "(stopped)" in s and at_prompt(s), "the prompt after Ctrl-C")
    assert "EXIT=" not in screen
    pane.keys("and now?", "Enter")
    pane.wait(lambda s: "answer to 'and now?'" in s, "the next message answered")


def test_ctrl_c_at_the_prompt_clears_the_line_then_leaves(run: Run) -> None:
    pane = run("chat")
    pane.wait(at_prompt, "the prompt")
    pane.keys("half a thought")
    pane.wait(lambda s: "half a thought" in prompt_line(s), "the typed text")
    pane.keys("C-c")
    screen = pane.wait(lambda s: prompt_line(s).strip() == "you>", "the line cleared")
    assert "EXIT=" not in screen
    pane.keys("C-c")
    screen = pane.wait(lambda s: "EXIT=0" in s, "chat leaving on an empty prompt")
    assert "(bye)" in screen


def test_ctrl_c_at_asks_approval_ends_it_at_once(koroku: Koroku, run: Run) -> None:
    pane = run(shlex.join(["ask", "edit the notes"]))
    pane.wait(lambda s: "Allow?" in prompt_line(s), "the approval question")
    pane.keys("C-c")
    pane.wait(lambda s: "EXIT=130" in s, "ask ending without Enter", timeout=15)
    assert (koroku.workspace / "notes.txt").read_text(encoding="utf-8") == "notes: buy milk\n"


def test_ctrl_c_at_a_servers_question_cancels_it_and_stops_the_turn(
    koroku: Koroku, run: Run, fake_gemini: FakeGemini
) -> None:
    write_config(koroku.home / "mcp.json", {"ev": everything_entry()})
    fake_gemini.reply_calls(("ev_trigger-elicitation-request", {}))
    pane = run("chat --yes")
    pane.wait(at_prompt, "the prompt", timeout=90)
    pane.keys("please fill the form", "Enter")
    pane.wait(lambda s: "asks:" in s and "name>" in prompt_line(s), "the server's question")
    pane.keys("C-c")
    screen = pane.wait(lambda s: "(stopped)" in s and at_prompt(s), "the prompt after Ctrl-C")
    assert "EXIT=" not in screen, "Ctrl-C stopped the turn, not the chat"
    assert "(the server's question is cancelled)" in screen
    pane.keys("hello there", "Enter")
    pane.wait(lambda s: "answer to 'hello there'" in s, "the whole next line answered")
    pane.keys("exit", "Enter")
    pane.wait(lambda s: "EXIT=0" in s, "chat leaving")


def test_ctrl_c_at_the_prompt_of_a_piped_chat_ends_it_at_once(run: Run) -> None:
    # stdout is a pipe, so chat reads plain lines from the terminal (no prompt_toolkit); the
    # read used to be a thread in input() that held the exit until Enter was pressed.
    pane = run("chat | cat")
    pane.wait(lambda s: "you>" in prompt_line(s), "the prompt")
    pane.keys("hello there", "Enter")
    pane.wait(lambda s: "answer to 'hello there'" in s, "the typed line answered")
    pane.wait(lambda s: prompt_line(s).startswith("you>"), "the prompt again")
    pane.keys("C-c")
    pane.wait(lambda s: "EXIT=" in s, "chat ending without Enter", timeout=15)

"""A reader that goes away (`koroku history --all --jsonl | head`) ends the command quietly:
exit 0 or 141 (128 + SIGPIPE), nothing but silence on stderr."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini
from tests.sync.test_sync_crash import write_turns


def read_one_line_and_go(koroku: Koroku, *command: str) -> tuple[int, str]:
    """Run `koroku command`, read one line of its stdout and close it (`| head -1`); its
    exit code and stderr."""
    reader = subprocess.Popen(
        [sys.executable, "-m", "koroku_desktop", *command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=koroku.env(KOROKU_HOME=str(koroku.home)),
        cwd=koroku.workspace,
    )
    assert reader.stdout is not None and reader.stderr is not None
    assert reader.stdout.readline()
    reader.stdout.close()
    code = reader.wait(timeout=120)
    return code, reader.stderr.read().decode()


@pytest.mark.parametrize(
    "command",
    [
        ("history", "--all", "--jsonl"),
        ("history", "--all"),
        ("history", "--json"),
        ("export", "--format", "json"),
        ("export", "--format", "md"),
        ("search", "--keyword", "-n", "400", "question"),
    ],
)
def test_a_closed_pipe_ends_the_command_quietly(koroku: Koroku, command: tuple[str, ...]) -> None:
    write_turns(koroku, 400, "question " + "x" * 400)  # far more than a pipe buffer holds
    code, stderr = read_one_line_and_go(koroku, *command)
    assert code in (0, 141), stderr
    assert stderr == ""


def test_ask_whose_reader_goes_away_mid_answer_ends_quietly(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    fake_gemini.reply_text("\n".join(f"line {n} " + "y" * 200 for n in range(2000)))
    code, stderr = read_one_line_and_go(koroku, "ask", "a long answer please")
    assert code in (0, 141), stderr
    assert "Traceback" not in stderr and "Broken pipe" not in stderr, stderr

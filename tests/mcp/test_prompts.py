"""MCP prompts as slash commands in `koroku chat`, against server-everything: listed, sent
with arguments, missing ones asked for with the server's completions, errors said."""

from __future__ import annotations

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.conftest import everything_entry, write_config
from tests.support.gemini import sent_user_texts


def test_prompts_are_slash_commands_with_completed_arguments(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    write_config(koroku.home / "mcp.json", {"ev": everything_entry()})
    fake_gemini.reply_text("It is sunny.")
    fake_gemini.reply_text("Promoted.")
    stdin = "\n".join(
        [
            "/prompts",
            '/ev:args-prompt city="Oslo"',
            "/ev:completable-prompt",
            "Engineering",
            "Al",  # completed by the server to Alice
            "/ev:nope",
            "exit",
            "",
        ]
    )
    result = koroku.run("chat", "--yes", stdin=stdin, timeout=120, KOROKU_MCP_WAIT="60")
    assert result.returncode == 0, result.stderr
    assert "/ev:args-prompt city [state] — " in result.stdout
    assert "/ev:completable-prompt department name — " in result.stdout
    assert "department (Choose the department.) — e.g. Engineering, Sales" in result.stderr
    assert (
        "name (Choose a team member" in result.stderr
        and "e.g. Alice, Bob, Charlie" in result.stderr
    )
    assert sent_user_texts(fake_gemini) == [
        "What's weather in Oslo?",
        "Please promote Alice to the head of the Engineering team.",
    ]
    assert "koroku> It is sunny." in result.stdout and "koroku> Promoted." in result.stdout
    assert len(fake_gemini.generate_requests()) == 2  # /ev:nope was not sent
    assert "✗ MCP server 'ev' has no prompt 'nope' (it has: simple-prompt," in result.stderr


def test_a_prompt_missing_its_argument_at_the_end_of_input_is_not_sent(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    write_config(koroku.home / "mcp.json", {"ev": everything_entry()})
    result = koroku.run(
        "chat", "--yes", stdin="/ev:args-prompt\n", timeout=120, KOROKU_MCP_WAIT="60"
    )
    assert result.returncode == 0, result.stderr
    assert "✗ the prompt was not sent: no more input" in result.stderr
    assert fake_gemini.generate_requests() == []

"""Elicitation in `koroku chat` against server-everything: a form asked field by field
(defaults kept, choices by number, bad answers asked again), a decline, and no capability
(so no such tool) where nobody can answer."""

from __future__ import annotations

import json

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.conftest import everything_entry, write_config
from tests.mcp.test_cli_mcp import _responses

TOOL = "ev_trigger-elicitation-request"


def _raw_result(fake: FakeGemini) -> dict[str, object]:
    text = str(_responses(fake)[0]["response"]["result"])
    return dict(json.loads(text.split("Raw result: ", 1)[1]))


def test_a_form_is_asked_in_the_terminal_and_its_answers_reach_the_server(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    write_config(koroku.home / "mcp.json", {"ev": everything_entry()})
    fake_gemini.reply_calls((TOOL, {}))
    fake_gemini.reply_text("Thanks.")
    answers = ["please fill the form", "", "Ada Lovelace", "maybe", "yes", "", "", "", ""]
    answers += ["500", "7", "", "3", "1, 2"] + [""] * 12 + ["exit", ""]
    result = koroku.run(
        "chat", "--yes", stdin="\n".join(answers), timeout=120, KOROKU_MCP_WAIT="60"
    )
    assert result.returncode == 0, result.stderr
    assert "MCP server 'ev' asks: Please provide inputs for the following fields:" in result.stderr
    assert "(name is required)" in result.stderr and "(answer yes or no)" in result.stderr
    assert "(between 1 and 100)" in result.stderr
    raw = _raw_result(fake_gemini)
    assert raw["action"] == "accept"
    content = raw["content"]
    assert isinstance(content, dict)
    assert content["name"] == "Ada Lovelace" and content["check"] is True
    assert content["firstLine"] == "It was a dark and stormy night."  # the default kept
    assert content["integer"] == 7 and content["number"] == 3.14
    assert content["untitledSingleSelectEnum"] == "Joey"
    assert content["untitledMultipleSelectEnum"] == ["Guitar", "Piano"]
    assert "koroku> Thanks." in result.stdout


def test_decline_reaches_the_server(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    write_config(koroku.home / "mcp.json", {"ev": everything_entry()})
    fake_gemini.reply_calls((TOOL, {}))
    fake_gemini.reply_text("Declined, fine.")
    stdin = "\n".join(["please fill the form", ":decline", "exit", ""])
    result = koroku.run("chat", "--yes", stdin=stdin, timeout=120, KOROKU_MCP_WAIT="60")
    assert result.returncode == 0, result.stderr
    assert _raw_result(fake_gemini)["action"] == "decline"


def test_ask_declares_no_elicitation_so_the_tool_is_not_offered(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    write_config(koroku.home / "mcp.json", {"ev": everything_entry()})
    fake_gemini.reply_text("ok")
    result = koroku.run("ask", "hello", timeout=120, KOROKU_MCP_WAIT="60")
    assert result.returncode == 0, result.stderr
    offered = fake_gemini.generate_requests()[0].tool_names
    assert "ev_echo" in offered and TOOL not in offered

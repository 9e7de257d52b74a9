"""`koroku mcp list` and `koroku ask` with MCP servers, as real `koroku` processes."""

from __future__ import annotations

import json

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.conftest import pid_alive, recorded_calls, stdio_entry, write_config


def _responses(fake: FakeGemini) -> list[dict[str, object]]:
    return [
        p["functionResponse"]
        for c in fake.generate_requests()[-1].contents
        for p in c.get("parts", [])
        if "functionResponse" in p
    ]


def test_mcp_list_shows_servers_state_tools_and_errors(koroku: Koroku) -> None:
    calls = koroku.home / "calls.jsonl"
    write_config(
        koroku.home / "mcp.json",
        {
            "local": stdio_entry(calls),
            "off": {**stdio_entry(calls), "enabled": False},
            "dies": {"command": "sh", "args": ["-c", "echo 'cannot start' >&2; exit 1"]},
            "typo": {"url": "ftp://nowhere"},
        },
    )
    result = koroku.run("mcp", "list", "--wait", "30")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["SERVER", "TRANSPORT", "ENABLED", "STATUS", "TOOLS"]
    rows = {line.split()[0]: line.split() for line in lines if not line.startswith(" ")}
    assert rows["local"][1:] == ["stdio", "yes", "ready", "10"]
    assert rows["off"][1:4] == ["stdio", "no", "disabled"]
    assert rows["dies"][3] == "failed"
    assert rows["typo"][3] == "invalid"
    assert "      local_echo <- echo\n      local_peek <- peek (read-only)\n" in result.stdout
    assert "      local_weird_name_with_chars_ <- weird name/with:chars!\n" in result.stdout
    assert "cannot start" in result.stdout and "'typo' in mcp.json" in result.stdout

    data = json.loads(koroku.run("mcp", "list", "--json", "--wait", "30").stdout)
    local = next(s for s in data["servers"] if s["name"] == "local")
    assert local["status"] == "ready" and local["transport"] == "stdio"
    assert {"name": "peek", "model_name": "local_peek",
            "description": "Read the server's notes (changes nothing).",
            "read_only": True} in local["tools"]  # fmt: skip


def test_mcp_list_with_no_config_and_with_broken_json(koroku: Koroku) -> None:
    result = koroku.run("mcp", "list")
    assert result.returncode == 0 and "No MCP servers configured" in result.stdout
    (koroku.home / "mcp.json").write_text("{oops", encoding="utf-8")
    result = koroku.run("mcp", "list")
    assert result.returncode == 0
    assert "mcp.json is not valid JSON" in result.stderr and "Traceback" not in result.stderr


def test_ask_yes_calls_an_mcp_tool_end_to_end(koroku: Koroku, fake_gemini: FakeGemini) -> None:
    calls = koroku.home / "calls.jsonl"
    write_config(koroku.home / "mcp.json", {"notes": stdio_entry(calls)})
    fake_gemini.reply_calls(("notes_echo", {"text": "from gemini"}))
    fake_gemini.reply_text("The server echoed it.")
    result = koroku.run("ask", "--yes", "echo through MCP", KOROKU_MCP_WAIT="60")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The server echoed it."
    assert "✓ notes_echo" in result.stderr
    assert "notes_echo" in fake_gemini.generate_requests()[0].tool_names
    (response,) = _responses(fake_gemini)
    assert response["response"] == {"result": "echo: from gemini",
                                    "structured": {"result": "echo: from gemini"}}  # fmt: skip
    (call,) = recorded_calls(calls)
    assert call["args"] == {"text": "from gemini"}
    assert not pid_alive(call["pid"])  # stopped when the command ended


def test_ask_without_yes_and_no_terminal_denies_and_the_server_is_not_called(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    calls = koroku.home / "calls.jsonl"
    write_config(
        koroku.home / "mcp.json",
        {"notes": stdio_entry(calls), "broken": {"command": "sh", "args": ["-c", "exit 4"]}},
    )
    fake_gemini.reply_calls(("notes_echo", {"text": "nope"}))
    fake_gemini.reply_text("I was not allowed.")
    result = koroku.run("ask", "echo through MCP", KOROKU_MCP_WAIT="60")
    assert result.returncode == 0, result.stderr
    assert "MCP server 'notes', tool 'echo'" in result.stderr
    assert "koroku: MCP server 'broken' failed to start" in result.stderr
    assert recorded_calls(calls) == []
    assert "nobody could approve it" in _responses(fake_gemini)[0]["response"]["error"]


def test_chat_offers_mcp_tools_and_stops_the_servers_on_exit(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    calls = koroku.home / "calls.jsonl"
    write_config(koroku.home / "mcp.json", {"notes": stdio_entry(calls)})
    fake_gemini.reply_calls(("notes_peek", {}))
    fake_gemini.reply_text("The notes say hello.")
    result = koroku.run(
        "chat", "--yes", stdin="what do the notes say?\nexit\n", KOROKU_MCP_WAIT="60"
    )
    assert result.returncode == 0, result.stderr
    assert "koroku> The notes say hello." in result.stdout
    assert "✓ notes_peek" in result.stdout
    (call,) = recorded_calls(calls)
    assert call["tool"] == "peek" and not pid_alive(call["pid"])

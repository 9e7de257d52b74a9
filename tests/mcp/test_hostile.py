"""Hostile servers as real processes: garbage on stdout, exit at once, hang, a huge result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.conftest import Koroku
from tests.fakes.gemini_server import FakeGemini
from tests.mcp.conftest import SERVERS, hang_entry, stdio_entry, write_config
from tests.mcp.test_cli_mcp import _responses


def garbage_entry(calls: Path) -> dict[str, object]:
    """tool_server.py behind two lines of garbage on stdout."""
    return {**stdio_entry(calls), "args": [str(SERVERS / "garbage_server.py")]}


def test_garbage_on_stdout_goes_to_the_servers_log_not_the_terminal(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    calls = koroku.home / "calls.jsonl"
    write_config(koroku.home / "mcp.json", {"chatty": garbage_entry(calls)})
    listing = koroku.run("mcp", "list", "--wait", "30")
    as_json = koroku.run("mcp", "list", "--json", "--wait", "30")
    fake_gemini.reply_text("done")
    asked = koroku.run("ask", "--yes", "hello")  # a slow start may name the error: one line
    for result in (listing, as_json, asked):
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr and "pydantic" not in result.stderr
    assert "Failed to parse" not in listing.stderr + as_json.stderr
    assert "chatty  stdio" in listing.stdout and " ready " in listing.stdout
    assert json.loads(as_json.stdout)["servers"][0]["status"] == "ready"
    assert asked.stdout.strip() == "done"
    log = (koroku.home / "logs" / "mcp-chatty.log").read_text(encoding="utf-8")
    assert "[koroku" in log and "Failed to parse JSONRPC message from server" in log
    assert "this line is not JSON-RPC" in log  # the traceback, kept for whoever debugs it


def test_a_server_hung_at_initialize_is_shown_slow_with_its_reason(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    calls = koroku.home / "calls.jsonl"
    write_config(koroku.home / "mcp.json", {"stuck": hang_entry(), "good": stdio_entry(calls)})
    listing = koroku.run("mcp", "list", "--wait", "1")
    assert listing.returncode == 0, listing.stderr
    rows = {ln.split()[0]: ln.split() for ln in listing.stdout.splitlines() if ln[:1] != " "}
    assert rows["stuck"][3] == "slow"
    assert "last error: not ready after" in listing.stdout and "(initializing)" in listing.stdout

    fake_gemini.reply_text("answered without the stuck server")
    asked = koroku.run("ask", "--yes", "hello")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.strip() == "answered without the stuck server"
    assert "koroku: MCP server 'stuck' is slow to start: not ready after" in asked.stderr


def test_a_server_that_exits_at_once_is_failed_with_its_stderr(koroku: Koroku) -> None:
    write_config(
        koroku.home / "mcp.json",
        {"gone": {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no way')"]}},
    )
    result = koroku.run("mcp", "list", "--json", "--wait", "30")
    (server,) = json.loads(result.stdout)["servers"]
    assert server["status"] == "failed" and "no way" in server["last_error"]
    assert "Traceback" not in result.stderr


def test_a_huge_result_is_cut_before_it_reaches_the_model(
    koroku: Koroku, fake_gemini: FakeGemini
) -> None:
    calls = koroku.home / "calls.jsonl"
    write_config(koroku.home / "mcp.json", {"big": stdio_entry(calls)})
    fake_gemini.reply_calls(("big_huge", {"size": 3_000_000}))
    fake_gemini.reply_text("that was long")
    result = koroku.run("ask", "--yes", "make it long", timeout=120, KOROKU_MCP_WAIT="60")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "that was long"
    (response,) = _responses(fake_gemini)
    text = response["response"]["result"]
    assert text.startswith("x" * 1000) and len(text) < 201_000
    assert "the result had 3,000,000 characters, 200,000 kept" in text
    assert "structured" not in response["response"]
    assert "left out" in response["response"]["structured_cut"]

"""mcp.json: the Claude desktop format, one bad entry never spoiling the others, edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from koroku_desktop.mcp import (
    McpConfigError,
    ServerConfig,
    parse_server,
    read_config,
    remove_server,
    save_server,
)
from koroku_desktop.mcp.config import parse_config


def test_stdio_and_http_entries_in_the_claude_desktop_format(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {"command": "npx", "args": ["-y", "server"], "env": {"A": "1"}},
                    "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Token": "t"}},
                    "off": {"command": "x", "enabled": False},
                }
            }
        )
    )
    config = read_config(path)
    assert not config.errors
    files, remote, off = (config.servers[n] for n in ("files", "remote", "off"))
    assert (files.transport, files.command, files.args, files.env) == (
        "stdio",
        "npx",
        ("-y", "server"),
        (("A", "1"),),
    )
    assert (remote.transport, remote.url, remote.headers) == (
        "http",
        "http://127.0.0.1:9/mcp",
        (("X-Token", "t"),),
    )
    assert off.enabled is False


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"args": []}, '"command"'),
        ({"command": "x", "args": "not a list"}, '"args"'),
        ({"command": "x", "env": {"A": 1}}, '"env"'),
        ({"url": "ftp://host"}, '"url"'),
        ({"command": "x", "url": "http://h"}, "not both"),
        ({"command": "x", "enabled": "no"}, '"enabled"'),
        ("just a string", "object"),
    ],
)
def test_a_bad_entry_is_an_error_naming_the_server(entry: object, problem: str) -> None:
    config = parse_config(json.dumps({"mcpServers": {"bad": entry, "good": {"command": "x"}}}))
    assert list(config.servers) == ["good"]
    assert "'bad'" in config.errors["bad"] and problem in config.errors["bad"]


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"mcpServers": []}'])
def test_a_broken_file_is_a_clear_error(text: str) -> None:
    with pytest.raises(McpConfigError, match=r"mcp\.json"):
        parse_config(text)


def test_a_missing_file_means_no_servers(tmp_path: Path) -> None:
    assert read_config(tmp_path / "mcp.json").servers == {}


def test_save_and_remove_keep_everything_else(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps({"other": 1, "mcpServers": {"a": {"command": "x", "custom": "kept"}}})
    )
    save_server(path, ServerConfig("a", "stdio", command="y", args=("--z",)))
    save_server(path, parse_server("b", {"url": "https://example.invalid/mcp"}))
    data = json.loads(path.read_text())
    assert data["other"] == 1
    assert data["mcpServers"]["a"] == {"custom": "kept", "command": "y", "args": ["--z"]}
    assert path.stat().st_mode & 0o777 == 0o600
    save_server(path, ServerConfig("c", "http", url="http://h/mcp", enabled=False), replaces="b")
    remove_server(path, "a")
    assert json.loads(path.read_text())["mcpServers"] == {
        "c": {"url": "http://h/mcp", "enabled": False}
    }

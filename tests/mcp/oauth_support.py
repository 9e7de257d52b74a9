"""The OAuth tests' authorization server, keyring and in-process browser (shared)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from koroku_desktop.app.config import KeyringSecrets
from koroku_desktop.app.runtime import McpManager
from tests.mcp.conftest import FAST, SERVERS, _free_port, serving, write_config
from tests.support.keyring_file import FileKeyring

OAUTH_SERVER = SERVERS / "oauth_server.py"
TOKENS_KEY = "koroku\tmcp_oauth_tokens:auth"
CLIENT_KEY = "koroku\tmcp_oauth_client:auth"


@dataclass
class AuthServer:
    """The running authorization + resource server, and what it issued."""

    url: str
    tokens_file: Path

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")

    def grants(self) -> list[str]:
        """The grant types exchanged at /token so far, in order."""
        with urllib.request.urlopen(f"{self.base}/test/grants", timeout=30) as response:
            grants: list[str] = json.loads(response.read())["grants"]
            return grants

    def revoke_all(self) -> None:
        """Forget every access and refresh token (the person revoked Koroku)."""
        request = urllib.request.Request(f"{self.base}/test/revoke", method="POST")
        urllib.request.urlopen(request, timeout=30).close()

    def issued(self) -> list[str]:
        """Every access and refresh token it ever issued."""
        if not self.tokens_file.exists():
            return []
        lines = self.tokens_file.read_text(encoding="utf-8").splitlines()
        return [json.loads(line)["token"] for line in lines]


@contextmanager
def auth_server(tmp_path: Path, home: Path, **env: str) -> Iterator[AuthServer]:
    """oauth_server.py on a free port, with `env` (e.g. OAUTH_BAD_ISS=1), configured as the
    server `auth` in `home`'s mcp.json."""
    port = _free_port()
    tokens = tmp_path / "issued.jsonl"
    full_env = {**os.environ, "OAUTH_TOKENS_FILE": str(tokens), **env}
    argv = [sys.executable, str(OAUTH_SERVER), str(port)]
    with serving(argv, full_env, port, "the OAuth MCP server") as url:
        write_config(home / "mcp.json", {"auth": {"url": url}})
        yield AuthServer(url, tokens)


def keyring_manager(home: Path) -> McpManager:
    """A manager of `home`'s mcp.json keeping OAuth tokens in the keyring (the test's)."""
    return McpManager(home / "mcp.json", home / "logs", FAST, KeyringSecrets())


async def follow(url: str) -> None:
    """The in-process browser: follow the authorization page to the loopback redirect."""

    def visit() -> None:
        with urllib.request.urlopen(url, timeout=30) as response:
            response.read()

    await asyncio.to_thread(visit)


def stored(backend: FileKeyring, key: str) -> dict[str, Any] | None:
    """A keyring entry of the server, parsed."""
    text = backend.entries().get(key)
    return None if text is None else dict(json.loads(text))

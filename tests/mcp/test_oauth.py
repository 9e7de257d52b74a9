"""OAuth 2.1 sign-in to an HTTP MCP server, against a real authorization server on 127.0.0.1.

`servers/oauth_server.py` is the SDK's own server-side auth (metadata, registration,
authorize, token with PKCE and refresh) in front of a resource server that requires a bearer
token. The browser is `servers/fake_browser.py`, started by `webbrowser` through `$BROWSER`
in the real `koroku` process, or an HTTP client in this process: it follows the authorization
page's redirect to Koroku's loopback address. Tokens live in a real keyring backend in one
file (`tests/support/keyring_file.py`), shared by every process of a test, so a second
process is a real restart.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from koroku_desktop.app.runtime import ServerStatus, SignInFailed
from tests.mcp.conftest import SERVERS, _free_port, write_config
from tests.mcp.oauth_support import (
    CLIENT_KEY,
    TOKENS_KEY,
    AuthServer,
    auth_server,
    follow,
    keyring_manager,
    stored,
)
from tests.support.keyring_file import FileKeyring
from tests.support.processes import Koroku
from tests.support.waits import async_wait_until

FAKE_BROWSER = SERVERS / "fake_browser.py"


def browser_env(tmp_path: Path, close: bool = False) -> dict[str, Any]:
    """`$BROWSER` for a `koroku` subprocess: fake_browser.py (which may close at once)."""
    env: dict[str, Any] = {
        "BROWSER": f"{sys.executable} {FAKE_BROWSER} %s",
        "FAKE_BROWSER_LOG": str(tmp_path / "browser.log"),
    }
    if close:
        env["FAKE_BROWSER_CLOSE"] = "1"
    return env


def assert_no_token_leaked(server: AuthServer, home: Path, *outputs: str) -> None:
    """No issued token appears in what was printed or in any log file."""
    issued = server.issued()
    assert issued, "the server issued no token"
    texts = list(outputs)
    texts += [p.read_text(errors="replace") for p in (home / "logs").rglob("*") if p.is_file()]
    for token in issued:
        for text in texts:
            assert token not in text


def login(koroku: Koroku, tmp_path: Path, *extra: str, close: bool = False) -> Any:
    """`koroku mcp login auth` in a real process, its browser being fake_browser.py."""
    return koroku.run("mcp", "login", "auth", *extra, **browser_env(tmp_path, close))


def list_json(koroku: Koroku) -> dict[str, Any]:
    """`koroku mcp list --json`'s entry for the server (a new process: a restart)."""
    done = koroku.run("mcp", "list", "--json", "--wait", "30")
    assert done.returncode == 0, done.stderr
    servers: list[dict[str, Any]] = json.loads(done.stdout)["servers"]
    return next(s for s in servers if s["name"] == "auth")


def test_sign_in_in_the_terminal_then_a_restart_reuses_the_token(
    koroku: Koroku, koroku_home: Path, tmp_path: Path, file_keyring: FileKeyring
) -> None:
    with auth_server(tmp_path, koroku_home) as server:
        done = login(koroku, tmp_path)
        assert done.returncode == 0, done.stderr
        assert "Signed in to 'auth'" in done.stdout
        assert "/authorize?" in done.stderr  # the address, for when no browser opens
        assert "Signed in" in (tmp_path / "browser.log").read_text()  # the loopback page
        assert server.grants() == ["authorization_code"]
        tokens, client = stored(file_keyring, TOKENS_KEY), stored(file_keyring, CLIENT_KEY)
        assert tokens is not None and tokens["url"] == server.url
        assert client is not None and client["client"]["client_id"]  # registered (RFC 7591)

        entry = list_json(koroku)  # a second process: the stored token is used as it is
        assert entry["status"] == "ready", entry
        assert entry["sign_in"] == "signed in"
        assert [t["name"] for t in entry["tools"]] == ["whoami"]
        assert server.grants() == ["authorization_code"]  # no new sign-in, no refresh

        text = koroku.run("mcp", "list", "--wait", "30")
        assert "sign-in: signed in (OAuth)" in text.stdout
        assert_no_token_leaked(server, koroku_home, done.stdout, done.stderr, text.stdout)

        out = koroku.run("mcp", "logout", "auth")
        assert out.returncode == 0 and "Signed out of 'auth'" in out.stdout
        assert stored(file_keyring, TOKENS_KEY) is None
        assert stored(file_keyring, CLIENT_KEY) is None


@pytest.mark.parametrize("issuer_host", ["127.0.0.1", "localhost"], ids=["same", "separate"])
def test_a_token_expired_while_koroku_was_closed_is_refreshed(
    koroku: Koroku, koroku_home: Path, tmp_path: Path, file_keyring: FileKeyring, issuer_host: str
) -> None:
    """Also when the authorization server is another origin (its token endpoint is kept)."""
    with auth_server(tmp_path, koroku_home, OAUTH_AS_HOST=issuer_host) as server:
        done = login(koroku, tmp_path)
        assert done.returncode == 0, done.stderr
        before = stored(file_keyring, TOKENS_KEY)
        assert before is not None
        before["expires_at"] = time.time() - 60  # it expired a minute ago
        file_keyring.set_password("koroku", "mcp_oauth_tokens:auth", json.dumps(before))

        entry = list_json(koroku)
        assert entry["status"] == "ready", entry
        assert server.grants() == ["authorization_code", "refresh_token"]
        after = stored(file_keyring, TOKENS_KEY)
        assert after is not None and after["expires_at"] > time.time()
        assert after["token"]["access_token"] != before["token"]["access_token"]
        assert_no_token_leaked(server, koroku_home, done.stdout, done.stderr)


@pytest.mark.parametrize("expired", [False, True], ids=["refused", "refresh-refused"])
async def test_a_refused_token_shows_sign_in_needed_and_sign_in_fixes_it(
    koroku: Koroku, koroku_home: Path, tmp_path: Path, file_keyring: FileKeyring, expired: bool
) -> None:
    with auth_server(tmp_path, koroku_home) as server:
        done = login(koroku, tmp_path)
        assert done.returncode == 0, done.stderr
        server.revoke_all()
        if expired:  # then the refresh is refused too
            tokens = stored(file_keyring, TOKENS_KEY)
            assert tokens is not None
            tokens["expires_at"] = time.time() - 60
            file_keyring.set_password("koroku", "mcp_oauth_tokens:auth", json.dumps(tokens))
        manager = keyring_manager(koroku_home)
        notices: list[str] = []
        manager.notices.append(notices.append)

        def status() -> ServerStatus:
            return next(s for s in manager.statuses() if s.name == "auth")

        await manager.start()
        try:
            await async_wait_until(lambda: status().state == "failed")
            assert status().sign_in == "sign in needed"
            assert "koroku mcp login auth" in (status().last_error or "")
            assert "auth: sign in needed" in notices  # the status bar's line

            await manager.sign_in("auth", follow, 30)  # Settings' "Sign in"
            await async_wait_until(lambda: status().state == "ready")
            assert status().sign_in == "signed in"
            manager.specs()
            response, _ = await manager.call("auth_whoami", {})
            assert response["result"] == "signed in", response
        finally:
            await manager.stop()
        assert_no_token_leaked(server, koroku_home, done.stdout, done.stderr, *notices)


def test_an_answer_from_another_issuer_is_refused(
    koroku: Koroku, koroku_home: Path, tmp_path: Path, file_keyring: FileKeyring
) -> None:
    with auth_server(tmp_path, koroku_home, OAUTH_BAD_ISS="1") as server:
        done = login(koroku, tmp_path)
        assert done.returncode == 1
        assert "refused" in done.stderr and "http://evil.example" in done.stderr
        assert "Traceback" not in done.stderr
        assert server.grants() == []  # the code was never exchanged
        assert stored(file_keyring, TOKENS_KEY) is None


def test_a_closed_browser_ends_the_sign_in_with_a_clear_message(
    koroku: Koroku, koroku_home: Path, tmp_path: Path, file_keyring: FileKeyring
) -> None:
    with auth_server(tmp_path, koroku_home) as server:
        done = login(koroku, tmp_path, "--wait", "2", close=True)
        assert done.returncode == 1
        assert "sign-in to 'auth' was not finished within 2 s" in done.stderr
        assert "Traceback" not in done.stderr
        assert stored(file_keyring, TOKENS_KEY) is None
        assert server.grants() == []

        assert login(koroku, tmp_path).returncode == 0  # signed in, then asked again
        before = stored(file_keyring, TOKENS_KEY)
        again = login(koroku, tmp_path, "--wait", "2", close=True)
        assert again.returncode == 1 and "nothing changed" in again.stderr
        assert stored(file_keyring, TOKENS_KEY) == before  # the working sign-in is kept
        assert list_json(koroku)["status"] == "ready"


def test_login_names_what_is_wrong_without_a_keyring_or_server(
    koroku: Koroku, koroku_home: Path, tmp_path: Path
) -> None:
    write_config(koroku_home / "mcp.json", {"web": {"url": "http://127.0.0.1:9/mcp"}})
    missing = koroku.run("mcp", "login", "nope")
    assert missing.returncode == 1 and "no MCP server called 'nope'" in missing.stderr
    no_keyring = koroku.run("mcp", "login", "web")  # the test default: no usable keyring
    assert no_keyring.returncode == 1 and "no OS keyring" in no_keyring.stderr


async def test_the_loopback_takes_only_its_own_answer(tmp_path: Path) -> None:
    from koroku_desktop.mcp.oauth import LoopbackRedirect

    loopback = LoopbackRedirect()
    uri = await loopback.start(0)
    loopback.expected_state = "s1"

    def get(url: str) -> int:
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    try:
        assert await asyncio.to_thread(get, f"{uri}?code=x&state=other") == 400
        assert await asyncio.to_thread(get, uri.replace("/callback", "/favicon.ico")) == 404
        assert await asyncio.to_thread(get, f"{uri}?error=access_denied&state=s1") == 200
        with pytest.raises(SignInFailed, match="access_denied"):
            await loopback.wait(30)
    finally:
        await loopback.close()
    assert _free_port()  # the port is given back


async def test_a_token_revoked_while_connected_fails_the_call_and_asks_for_a_sign_in(
    koroku: Koroku, koroku_home: Path, tmp_path: Path, file_keyring: FileKeyring
) -> None:
    with auth_server(tmp_path, koroku_home) as server:
        done = login(koroku, tmp_path)
        assert done.returncode == 0, done.stderr
        manager = keyring_manager(koroku_home)
        notices: list[str] = []
        manager.notices.append(notices.append)
        await manager.start()
        try:
            await manager.wait_settled(30)
            manager.specs()
            server.revoke_all()
            response, _ = await manager.call("auth_whoami", {})
            assert "sign in needed" in response["error"], response  # what the model reads
            await async_wait_until(lambda: "auth: sign in needed" in notices)
        finally:
            await manager.stop()
        listed = koroku.run("mcp", "list", "--wait", "30")
        assert "sign-in: needed (run `koroku mcp login auth`)" in listed.stdout
        assert_no_token_leaked(server, koroku_home, done.stdout, listed.stdout, listed.stderr)

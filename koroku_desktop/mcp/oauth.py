"""OAuth 2.1 for streamable-HTTP MCP servers, through the SDK's `OAuthClientProvider`.

The SDK speaks the protocol: protected-resource metadata (RFC 9728), authorization-server
metadata (RFC 8414), dynamic client registration (RFC 7591; Koroku publishes no client ID
metadata document), PKCE, the `iss` check (RFC 9207) and refresh. Koroku adds the rest, in
two modes:

- a running connection (`connection_auth`) never opens a browser: when the server refuses its
  token and a refresh does not help, the flow stops with `SignInNeeded` and the server shows
  "sign in needed";
- `sign_in` (Settings' *Sign in*, `koroku mcp login NAME`) runs the whole flow: a one-shot
  listener on 127.0.0.1 (the loopback redirect), the authorization page opened through the
  front end's `UrlOpener`, the code exchanged, the tokens kept in the keyring.

No token, code or verifier is ever logged or printed.
"""

from __future__ import annotations

import asyncio
import inspect
import socket
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlparse

from mcp import Client
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from mcp_types import Implementation
from pydantic import AnyUrl

from koroku_desktop import __version__
from koroku_desktop.domain.errors import KorokuError
from koroku_desktop.mcp.config import ServerConfig
from koroku_desktop.mcp.oauth_store import KeyringTokenStorage
from koroku_desktop.mcp.state import (
    SIGN_IN_TIMEOUT_S,
    SecretStore,
    SignInFailed,
    SignInNeeded,
    SignInTimeout,
    UrlOpener,
)

_E = TypeVar("_E", bound=BaseException)

CALLBACK_PATH = "/callback"
_PAGE = (
    "<!doctype html><meta charset=utf-8><title>Koroku</title>"
    "<body style='font-family:sans-serif;margin:3em'><h2>{title}</h2><p>{text}</p></body>"
)


def has_static_auth(config: ServerConfig) -> bool:
    """Whether mcp.json gives the server an `Authorization` header (then no OAuth)."""
    return any(k.lower() == "authorization" for k, _ in config.headers)


def _client_metadata(redirect_uri: str) -> OAuthClientMetadata:
    """Koroku as a public native client (PKCE, no secret) with one loopback redirect."""
    return OAuthClientMetadata(
        client_name="Koroku",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        software_id="koroku-desktop",
        software_version=__version__,
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _loopback_uri(port: int) -> str:
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


class _Provider(OAuthClientProvider):
    """The SDK's provider, plus what Koroku keeps across restarts: the token's expiry (a token
    that expired while Koroku was closed is refreshed before it is sent, where the SDK alone
    would send it and, refused, ask for a whole new sign-in) and the authorization server's
    metadata (so the refresh goes to its token endpoint, not to the MCP server's origin)."""

    def __init__(
        self, storage: KeyringTokenStorage, fresh: bool, *args: Any, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.koroku_storage = storage
        self.fresh = fresh
        """A sign-in: the stored tokens are not used (they stay until new ones replace them)."""

    async def _initialize(self) -> None:
        await super()._initialize()
        if self.fresh:
            self.context.clear_tokens()
        tokens = self.context.current_tokens
        if tokens is not None and tokens.expires_in is not None:
            self.context.update_token_expiry(tokens)
        if self.context.oauth_metadata is None and self.context.client_info is not None:
            self.context.oauth_metadata = await self.koroku_storage.get_metadata()


async def connection_auth(
    config: ServerConfig, secrets: SecretStore, on_needed: Callable[[], None]
) -> tuple[OAuthClientProvider, KeyringTokenStorage]:
    """The auth of a running connection: stored tokens, refreshed; never a browser.

    When a full sign-in would be needed, `on_needed` is called and `SignInNeeded` stops the
    flow (the connection fails with that reason until the person signs in).
    """
    storage = KeyringTokenStorage(secrets, config.name, config.url)
    redirect_uri = await stored_redirect_uri(storage)

    async def refuse(url: str) -> None:
        del url  # the authorization page is opened only by an explicit sign-in
        on_needed()
        raise SignInNeeded(f"MCP server {config.name!r}: sign in needed")

    async def no_callback() -> AuthorizationCodeResult:  # never reached: refuse raised
        raise SignInNeeded(f"MCP server {config.name!r}: sign in needed")

    metadata = _client_metadata(redirect_uri)
    return _Provider(storage, False, config.url, metadata, storage, refuse, no_callback), storage


async def stored_redirect_uri(storage: KeyringTokenStorage) -> str:
    """The loopback redirect this server's registration names (a new free port if none)."""
    client = await storage.get_client_info()
    for uri in (client.redirect_uris or []) if client is not None else []:
        if uri.host == "127.0.0.1" and uri.port:
            return str(uri)
    return _loopback_uri(_free_port())


class LoopbackRedirect:
    """A one-shot HTTP listener on 127.0.0.1 that receives the authorization response."""

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self.expected_state: str | None = None
        self.port = 0

    async def start(self, port: int = 0) -> str:
        """Listen on `port` (0: any free one); returns the redirect URI. Raises OSError."""
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]
        return _loopback_uri(self.port)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                line = (await reader.readline()).decode("latin-1")
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
            status, title, text = self._answer(line)
            body = _PAGE.format(title=title, text=text).encode()
            head = (
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()
        except (OSError, TimeoutError, UnicodeError):
            pass  # a half request from something else: ignored
        finally:
            writer.close()

    def _answer(self, request_line: str) -> tuple[str, str, str]:
        """(status, title, text) for one request; the first matching callback resolves."""
        parts = request_line.split()
        target = urlparse(parts[1]) if len(parts) >= 2 and parts[0] == "GET" else None
        if target is None or target.path != CALLBACK_PATH:
            return "404 Not Found", "Not found", "This address only receives Koroku's sign-in."
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        result = self._result
        if self.expected_state is not None and query.get("state") != self.expected_state:
            return "400 Bad Request", "Not this sign-in", "This answer is for another sign-in."
        if result is None or result.done():
            return "409 Conflict", "Already done", "This sign-in has already finished."
        if "error" in query:
            why = query.get("error_description") or query["error"]
            result.set_exception(SignInFailed(f"the authorization server refused: {why}"))
            return "200 OK", "Sign-in refused", f"The server said: {why}. You can close this page."
        result.set_result(
            AuthorizationCodeResult(
                code=query.get("code", ""), state=query.get("state"), iss=query.get("iss")
            )
        )
        return "200 OK", "Signed in", "Koroku has the answer. You can close this page."

    async def wait(self, browser_wait_s: float) -> AuthorizationCodeResult:
        """The authorization response; raises SignInTimeout after `browser_wait_s` s."""
        assert self._result is not None, "start() first"
        try:
            async with asyncio.timeout(browser_wait_s):
                return await asyncio.shield(self._result)
        except TimeoutError:
            raise SignInTimeout(f"no answer from the browser within {browser_wait_s:g} s") from None

    async def close(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, the members of its groups, and their causes, depth first."""
    seen: set[int] = set()
    stack = [exc]
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        yield cur
        if isinstance(cur, BaseExceptionGroup):
            stack.extend(reversed(cur.exceptions))
        for nxt in (cur.__cause__, cur.__context__):
            if nxt is not None:
                stack.append(nxt)


def find_cause(exc: BaseException, kind: type[_E]) -> _E | None:
    """The first `kind` among `exc`, its groups' members and their causes."""
    return next((e for e in _causes(exc) if isinstance(e, kind)), None)


def _explain(name: str, exc: BaseException, timeout: float) -> SignInFailed:
    if find_cause(exc, SignInTimeout) is not None:
        return SignInTimeout(
            f"sign-in to {name!r} was not finished within {timeout:g} s (was the browser page "
            "closed?); nothing changed, sign in again when ready"
        )
    failed = find_cause(exc, KorokuError)  # ours: a refusal, no keyring...
    if failed is not None:
        return SignInFailed(f"sign-in to {name!r} failed: {failed}")
    flow = find_cause(exc, OAuthFlowError)
    if flow is not None:
        text = str(flow)
        if "iss" in text:
            text = f"the answer did not come from the server's authorization server ({text})"
        return SignInFailed(f"sign-in to {name!r} refused: {text}")
    inner = next((e for e in _causes(exc) if not isinstance(e, BaseExceptionGroup)), exc)
    return SignInFailed(f"sign-in to {name!r} failed: {type(inner).__name__}: {inner}")


async def _open(open_url: UrlOpener, url: str) -> None:
    opened = open_url(url)
    if inspect.isawaitable(opened):
        await opened


async def sign_in(
    config: ServerConfig,
    secrets: SecretStore,
    open_url: UrlOpener,
    browser_wait_s: float = SIGN_IN_TIMEOUT_S,
) -> None:
    """Sign in to an HTTP server in the browser and keep its tokens in the keyring.

    Asks again even when a stored token still works (which is kept if this sign-in fails).
    Raises `SignInFailed` (`SignInTimeout` when the browser never comes back) with a sentence
    for a person.
    """
    if config.transport != "http":
        raise SignInFailed(
            f"MCP server {config.name!r} is not an HTTP server: nothing to sign in to"
        )
    storage = KeyringTokenStorage(secrets, config.name, config.url)
    loopback = LoopbackRedirect()
    wanted = urlparse(await stored_redirect_uri(storage)).port or 0
    try:
        redirect_uri = await loopback.start(wanted)
    except OSError:  # the registered port is taken now: register again with a free one
        await storage.forget_all()
        redirect_uri = await loopback.start(0)

    async def redirect(url: str) -> None:
        loopback.expected_state = parse_qs(urlparse(url).query).get("state", [""])[0]
        await _open(open_url, url)

    async def callback() -> AuthorizationCodeResult:
        return await loopback.wait(browser_wait_s)

    metadata = _client_metadata(redirect_uri)
    provider = _Provider(storage, True, config.url, metadata, storage, redirect, callback)
    info = Implementation(name="koroku", version=__version__)
    try:
        async with (
            create_mcp_http_client(dict(config.headers), auth=provider) as http,
            Client(streamable_http_client(config.url, http_client=http), client_info=info),
        ):
            pass  # initialized with the new token: the server accepts it
    except Exception as exc:  # noqa: BLE001 — any failure of the flow is one sentence
        raise _explain(config.name, exc, browser_wait_s) from None
    finally:
        await loopback.close()
    if provider.context.current_tokens is None:
        raise SignInFailed(f"MCP server {config.name!r} asked for no sign-in: it needs none")
    if provider.context.oauth_metadata is not None:
        await storage.set_metadata(provider.context.oauth_metadata)


async def sign_out(config: ServerConfig, secrets: SecretStore) -> None:
    """Forget the server's tokens and registration (kept only in the keyring)."""
    await KeyringTokenStorage(secrets, config.name, config.url).forget_all()

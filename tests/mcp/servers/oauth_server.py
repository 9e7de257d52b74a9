"""An MCP resource server that is its own OAuth 2.1 authorization server (the SDK's auth).

Usage: `python oauth_server.py PORT`. It serves protected-resource metadata (RFC 9728),
authorization-server metadata (RFC 8414), dynamic client registration (RFC 7591), an
`/authorize` that approves at once (no login page: the test's "browser" follows its redirect),
`/token` with PKCE and refresh, and `/mcp` requiring a bearer token. Tokens live in memory.

Environment:
- `OAUTH_TOKENS_FILE`: every issued access and refresh token is appended as a JSON line, so a
  test can prove that none of them ever reaches a log or the terminal.
- `OAUTH_BAD_ISS=1`: the authorization response names another issuer (RFC 9207).
- `OAUTH_AS_HOST=localhost`: the authorization server is another origin than the resource
  (`http://localhost:PORT` against `http://127.0.0.1:PORT/mcp`): its endpoints answer only
  there, as with a separate identity provider.
- `POST /test/revoke` forgets every access and refresh token (the user revoked Koroku).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

PORT = int(sys.argv[1])
ISSUER = f"http://{os.environ.get('OAUTH_AS_HOST') or '127.0.0.1'}:{PORT}"
RESOURCE = f"http://127.0.0.1:{PORT}/mcp"
RESOURCE_PATHS = ("/mcp", "/.well-known/oauth-protected-resource", "/test/")


def _record(kind: str, token: str) -> None:
    path = os.environ.get("OAUTH_TOKENS_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"kind": kind, "token": token}) + "\n")


class MemoryAuthServer:
    """An OAuthAuthorizationServerProvider that approves every request, in memory."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.grants: list[str] = []

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(24)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        iss = "http://evil.example" if os.environ.get("OAUTH_BAD_ISS") else ISSUER
        return construct_redirect_uri(
            str(params.redirect_uri), code=code, state=params.state, iss=iss
        )

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + 3600,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        _record("access", access)
        _record("refresh", refresh)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=3600,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.grants.append("authorization_code")
        assert client.client_id is not None
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)  # rotated: the old one is spent
        for token, info in list(self.access.items()):  # and the old access token revoked
            if info.client_id == refresh_token.client_id:
                del self.access[token]
        self.grants.append("refresh_token")
        assert client.client_id is not None
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


provider = MemoryAuthServer()
server = MCPServer(
    "oauth-server",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=ISSUER,
        resource_server_url=RESOURCE,
        client_registration_options=ClientRegistrationOptions(enabled=True),
        validate_token_resource=False,
    ),
)


@server.tool(description="Say who is signed in.")
def whoami() -> str:
    return "signed in"


@server.custom_route("/test/revoke", methods=["POST"])
async def revoke_all(request: Request) -> Response:
    provider.access.clear()
    provider.refresh.clear()
    return JSONResponse({"revoked": True})


@server.custom_route("/test/grants", methods=["GET"])
async def grants(request: Request) -> Response:
    return JSONResponse({"grants": provider.grants, "clients": len(provider.clients)})


def split_origins(app: Any) -> Any:
    """With a separate issuer origin, the resource origin serves only the resource."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and ISSUER.split("//")[1].split(":")[0] != "127.0.0.1":
            host = dict(scope["headers"]).get(b"host", b"").decode()
            if host.startswith("127.0.0.1") and not scope["path"].startswith(RESOURCE_PATHS):
                await JSONResponse({"error": "not here"}, status_code=404)(scope, receive, send)
                return
        await app(scope, receive, send)

    return asgi


if __name__ == "__main__":
    uvicorn.run(split_origins(server.streamable_http_app()), host="127.0.0.1", port=PORT)

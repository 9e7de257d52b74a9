"""An HTTP MCP server's OAuth tokens and client registration, kept in the OS keyring.

The SDK's `TokenStorage` over Koroku's `SecretStore` (the keyring seam of app/). Two entries
per server, `mcp_oauth_tokens:<name>` and `mcp_oauth_client:<name>`, each a small JSON object
that also records the server's URL: a server whose URL changed starts signed out. The token's
absolute expiry is stored beside it, so a second process knows an old token has expired and
refreshes it before use. Values are never logged; keyring calls run off the event loop.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken
from pydantic import ValidationError

from koroku_desktop.may_block import may_block
from koroku_desktop.mcp.state import SecretStore

log = logging.getLogger(__name__)

TOKENS_KEY = "mcp_oauth_tokens:{name}"
CLIENT_KEY = "mcp_oauth_client:{name}"

# Every keyring call is `may_block`: the OS keyring may wait for a person (its unlock dialog),
# and the MCP start's deadlines and the front end's wait for the servers must still run
# meanwhile, on `koroku ask`'s loop too (cli/one_shot.py).


class KeyringTokenStorage:
    """The SDK's TokenStorage for one server, in the keyring (`SecretStore`)."""

    def __init__(self, secrets: SecretStore, name: str, url: str) -> None:
        self.secrets = secrets
        self.name = name
        self.url = url
        self.stored_tokens = False
        """Whether tokens were found or stored in this process (the server uses OAuth)."""

    def __repr__(self) -> str:
        return f"KeyringTokenStorage({self.name!r})"

    async def _read(self, template: str) -> dict[str, Any] | None:
        key = template.format(name=self.name)
        try:
            text = await may_block(self.secrets.get, key)
        except Exception as exc:  # noqa: BLE001 — a broken keyring reads as signed out
            log.warning(
                "keyring lookup for MCP server %r failed: %s", self.name, type(exc).__name__
            )
            return None
        if not text:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            log.warning("the keyring entry of MCP server %r is not JSON; ignored", self.name)
            return None
        if not isinstance(data, dict) or data.get("url") != self.url:
            return None  # another server's (the URL changed): sign in again
        return data

    async def _write(self, template: str, data: dict[str, Any]) -> None:
        key = template.format(name=self.name)
        text = json.dumps({"url": self.url, **data})
        await may_block(self.secrets.set, key, text)

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, `expires_in` counted from now (0 once expired)."""
        data = await self._read(TOKENS_KEY)
        if data is None:
            return None
        try:
            token = OAuthToken.model_validate(data.get("token"))
        except ValidationError:
            return None
        expires_at = data.get("expires_at")
        if isinstance(expires_at, int | float):
            token.expires_in = max(0, int(expires_at - time.time()))
        self.stored_tokens = True
        return token

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep new tokens (after a sign-in or a refresh) with their absolute expiry."""
        expires_at = None if tokens.expires_in is None else time.time() + tokens.expires_in
        self.stored_tokens = True
        await self._write(
            TOKENS_KEY, {"token": tokens.model_dump(mode="json"), "expires_at": expires_at}
        )

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The client registration (dynamic or a metadata document URL), if any."""
        data = await self._read(CLIENT_KEY)
        if data is None:
            return None
        try:
            return OAuthClientInformationFull.model_validate(data.get("client"))
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep the registration (it is reused by every later sign-in)."""
        client = client_info.model_dump(mode="json", exclude_none=True)
        await self._write(CLIENT_KEY, {"client": client})

    async def get_metadata(self) -> OAuthMetadata | None:
        """The authorization server's metadata found at the last sign-in (its token endpoint
        is where a refresh goes when that server is another origin than the MCP server)."""
        data = await self._read(CLIENT_KEY)
        try:
            return None if data is None else OAuthMetadata.model_validate(data.get("server"))
        except ValidationError:
            return None

    async def set_metadata(self, metadata: OAuthMetadata) -> None:
        """Keep the authorization server's metadata beside the registration."""
        data = await self._read(CLIENT_KEY)
        if data is not None:
            data["server"] = metadata.model_dump(mode="json", exclude_none=True)
            await self._write(CLIENT_KEY, {k: v for k, v in data.items() if k != "url"})

    async def forget_tokens(self) -> None:
        """Drop the tokens, keep the registration (a fresh sign-in reuses it)."""
        await may_block(self.secrets.delete, TOKENS_KEY.format(name=self.name))

    async def forget_all(self) -> None:
        """Drop the tokens and the registration (sign out)."""
        await self.forget_tokens()
        await may_block(self.secrets.delete, CLIENT_KEY.format(name=self.name))

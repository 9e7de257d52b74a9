"""The client side of one server's session: how it is reached, and what it may ask.

`ServerConnection` opens the transport here (a stdio process or streamable HTTP) inside its
exit stack, then the SDK's `Client` on it; `ask_for_log` asks a server of the older,
handshake-era protocol for its log (a modern one sends it unasked); `answer_elicitation`
turns a server's question into the person's answer through the front end's `Elicitor`.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from contextlib import AsyncExitStack
from typing import Any, TextIO

from mcp import Client, StdioServerParameters
from mcp.client.auth import OAuthClientProvider
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from koroku_desktop.mcp.config import ServerConfig
from koroku_desktop.mcp.state import Elicitor, McpElicitation


async def open_transport(
    cfg: ServerConfig,
    stack: AsyncExitStack,
    errlog: TextIO | None,
    auth: OAuthClientProvider | None,
) -> Any:
    """The transport to `cfg`'s server: a stdio process writing its stderr to `errlog`
    (None: the SDK's default), or an HTTP client with `auth` entered on `stack`."""
    if cfg.transport == "stdio":
        params = StdioServerParameters(command=cfg.command, args=list(cfg.args), env=dict(cfg.env))
        return stdio_client(params) if errlog is None else stdio_client(params, errlog)
    http = await stack.enter_async_context(create_mcp_http_client(dict(cfg.headers), auth=auth))
    return streamable_http_client(cfg.url, http_client=http)


async def ask_for_log(client: Client) -> None:
    """A handshake-era server sends its log only after `logging/setLevel`; ask it, quietly."""
    if client.protocol_version not in MODERN_PROTOCOL_VERSIONS and (
        client.server_capabilities.logging is not None
    ):
        with warnings.catch_warnings(), contextlib.suppress(Exception):
            warnings.simplefilter("ignore")
            await client.set_logging_level("info")


async def answer_elicitation(
    ask: Elicitor | None, server: str, params: ElicitRequestParams, limit_s: float
) -> ElicitResult:
    """A server asks the person something; no one to ask, or no answer in time, declines."""
    if ask is None:
        return ElicitResult(action="decline")
    if isinstance(params, ElicitRequestURLParams):
        request = McpElicitation(server, params.message, url=params.url)
    else:
        request = McpElicitation(server, params.message, dict(params.requested_schema))
    try:
        async with asyncio.timeout(limit_s):
            answer = await ask(request)
    except TimeoutError:
        return ElicitResult(action="decline")
    content = answer.content if answer.action == "accept" and request.url is None else None
    return ElicitResult(action=answer.action, content=content)

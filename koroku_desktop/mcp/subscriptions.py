"""Resource subscriptions and change events of one server, on either protocol revision.

The URIs the conversation attached are kept subscribed. A 2025-era server takes
`resources/subscribe` for each (asked again after a reconnect) and pushes
`notifications/resources/updated` and list-changed notifications (the connection's message
handler passes them here). A 2026-07-28 server has no such push: once a resource of it is
attached, `listen` keeps a `subscriptions/listen` stream open for the subscribed URIs and
list changes, opened again when a URI is added (without one, its list changes are seen at
the connection's health check: an idle stream would hold an HTTP request open, and keep a
server from stopping while it waits for its requests to end). Either way an update is passed
on (the front end says the attached copy is older than the resource) and every event wakes
the connection to list again.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable

import anyio
from mcp import Client
from mcp.client.subscriptions import ResourceUpdated
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

log = logging.getLogger(__name__)

Updated = Callable[[str, str], None]
"""Told (server, uri) when a subscribed resource changed."""


def can_subscribe(client: Client) -> bool:
    """Whether the server reports resource changes (`resources.subscribe`, or any resources
    on 2026-07-28, where `subscriptions/listen` carries them)."""
    resources = client.server_capabilities.resources
    if resources is None:
        return False
    return client.protocol_version in MODERN_PROTOCOL_VERSIONS or bool(resources.subscribe)


class Subscriptions:
    """The URIs one server is asked to report changes of, and its change events."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.uris: set[str] = set()
        """Subscribed (or to subscribe again after a reconnect)."""
        self.on_updated: Updated | None = None
        self._refilter: anyio.Event | None = None

    async def add(self, client: Client, uri: str) -> bool:
        """Subscribe to `uri` (once); False when the server reports no changes."""
        if not can_subscribe(client):
            return False
        if uri in self.uris:
            return True
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            await _legacy_subscribe(client, uri)
        self.uris.add(uri)
        if self._refilter is not None:
            self._refilter.set()  # the open stream is opened again with the new URI
        return True

    def updated(self, uri: str) -> None:
        """A resource changed (a notification, or an event of the stream)."""
        if self.on_updated is not None:
            self.on_updated(self.server, uri)

    async def listen(self, client: Client, wake: asyncio.Event) -> None:
        """While connected: renew 2025-era subscriptions, or keep a 2026-07-28 stream open
        and wake the connection on each event (returns when the stream ends or fails)."""
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            for uri in sorted(self.uris) if can_subscribe(client) else ():
                try:
                    await _legacy_subscribe(client, uri)
                except Exception:  # noqa: BLE001 — a refused renewal leaves the others
                    log.info("MCP server %r: subscribing again to %s failed", self.server, uri)
            return
        try:
            while True:
                if not self.uris:  # a stream only for attached resources (see above)
                    self._refilter = anyio.Event()
                    await self._refilter.wait()
                elif not await self._listen_once(client, wake):
                    return
        except Exception as exc:  # noqa: BLE001 — without a stream the health check still re-lists
            log.info("MCP server %r: subscriptions/listen ended: %s", self.server, exc)
        finally:
            self._refilter = None

    async def _listen_once(self, client: Client, wake: asyncio.Event) -> bool:
        """One stream with the current URIs; True when it is to be opened again (a URI was
        added), False when the server ended it."""
        refilter = self._refilter = anyio.Event()
        uris = tuple(sorted(self.uris))
        resources = client.server_capabilities.resources is not None
        async with (
            client.listen(
                tools_list_changed=True,
                prompts_list_changed=client.server_capabilities.prompts is not None,
                resources_list_changed=resources,
                resource_subscriptions=uris if resources else (),
            ) as stream,
            anyio.create_task_group() as group,
        ):

            async def stop_on_refilter() -> None:
                await refilter.wait()
                group.cancel_scope.cancel()

            group.start_soon(stop_on_refilter)
            async for event in stream:
                if isinstance(event, ResourceUpdated):
                    self.updated(event.uri)
                wake.set()
            group.cancel_scope.cancel()
        return refilter.is_set()


async def _legacy_subscribe(client: Client, uri: str) -> None:
    """`resources/subscribe` (deprecated by the SDK for 2026-07-28, right for 2025 servers)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await client.subscribe_resource(uri)

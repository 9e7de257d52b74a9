"""What every MCP listing and completion shares: reading a paginated list to its end (or a
page limit, so a server that paginates forever cannot hang it), and asking a server to
complete an argument of a prompt or a resource template."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from mcp import Client
from mcp_types import PromptReference, ResourceTemplateReference

T = TypeVar("T")

Fetch = Callable[[str | None], Awaitable[tuple[Iterable[T], str | None]]]
"""One page from a cursor (None: the first): its items and the next cursor (None: last)."""


async def every_page(fetch: Fetch[T], pages: int, most: int | None = None) -> list[T]:
    """The items of up to `pages` pages, stopping at the last page or once `most` are in
    (at least one page is read)."""
    found: list[T] = []
    cursor: str | None = None
    for _ in range(pages):
        items, cursor = await fetch(cursor)
        found.extend(items)
        if cursor is None or (most is not None and len(found) >= most):
            break
    return found


async def complete(
    client: Client,
    reference: PromptReference | ResourceTemplateReference,
    argument: str,
    value: str,
    known: dict[str, str],
) -> list[str]:
    """The server's completions of one argument of a prompt or template (empty when it
    offers none)."""
    if client.server_capabilities.completions is None:
        return []
    result = await client.complete(reference, {"name": argument, "value": value}, known or None)
    return list(result.completion.values)

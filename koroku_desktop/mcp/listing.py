"""What every MCP listing and completion shares: reading a paginated list to its end (or a
page limit, so a server that paginates forever cannot hang it), and asking a server to
complete an argument of a prompt or a resource template."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeVar

from mcp import Client
from mcp_types import PromptReference, ResourceTemplateReference

T = TypeVar("T")

MAX_PAGES = 50
"""Pages read of one listing at the most: a server that paginates forever cannot hang it."""


class Page(Protocol):
    """A page of an MCP listing: the SDK's results of `*/list` all carry the next cursor."""

    @property
    def next_cursor(self) -> str | None:
        """Where the next page starts (None: this is the last)."""
        ...


P = TypeVar("P", bound=Page)


async def every_page(
    fetch: Callable[[str | None], Awaitable[P]],
    items: Callable[[P], Iterable[T]],
    *,
    pages: int = MAX_PAGES,
    most: int | None = None,
) -> list[T]:
    """The `items` of up to `pages` pages `fetch` reads from a cursor (None: the first),
    stopping at the last page or once `most` are in (at least one page is read)."""
    found: list[T] = []
    cursor: str | None = None
    for _ in range(pages):
        page = await fetch(cursor)
        found.extend(items(page))
        cursor = page.next_cursor
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

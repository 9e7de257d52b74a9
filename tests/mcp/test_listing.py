"""Reading an MCP listing page by page (mcp/listing.py): to the last page, at most `pages`
pages (a server that paginates forever cannot hang it), and stopping once `most` are in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from koroku_desktop.mcp.listing import MAX_PAGES, every_page


@dataclass
class _Page:
    items: list[int]
    next_cursor: str | None


Fetch = Callable[[str | None], Awaitable["_Page"]]


def _server(pages: int | None) -> tuple[list[str | None], Fetch]:
    """Pages of three items each; `pages` of them (None: endless). Records the cursors asked."""
    asked: list[str | None] = []

    async def fetch(cursor: str | None) -> _Page:
        asked.append(cursor)
        n = 0 if cursor is None else int(cursor)
        last = pages is not None and n == pages - 1
        return _Page([3 * n, 3 * n + 1, 3 * n + 2], None if last else str(n + 1))

    return asked, fetch


async def test_every_page_reads_to_the_last_page() -> None:
    asked, fetch = _server(3)
    found = await every_page(fetch, lambda page: page.items, pages=20)
    assert found == list(range(9)) and asked == [None, "1", "2"]


async def test_an_endless_listing_stops_after_the_page_limit() -> None:
    asked, fetch = _server(None)
    found = await every_page(fetch, lambda page: page.items, pages=4)
    assert len(found) == 12 and len(asked) == 4
    asked, fetch = _server(None)
    await every_page(fetch, lambda page: page.items)
    assert len(asked) == MAX_PAGES, "every listing (tools, prompts, resources) has one limit"


async def test_a_long_listing_stops_once_enough_are_in_and_always_reads_one_page() -> None:
    asked, fetch = _server(None)
    assert len(await every_page(fetch, lambda page: page.items, pages=20, most=5)) == 6
    assert len(asked) == 2
    asked, fetch = _server(None)
    assert len(await every_page(fetch, lambda page: page.items, pages=20, most=0)) == 3
    assert asked == [None]

"""Following a listing to its last page, whatever carries the next page: Notion's
`next_cursor`, Drive's `nextPageToken`, a `Link` header's next address (GitHub), a GraphQL
`endCursor`. At most `MAX_PAGES` pages: a cursor loop cannot run forever."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from knowledge.sources.connectors.base import ConnectorError, ConnectorUnavailable

MAX_PAGES = 10_000
"""Result pages followed for one listing at most."""
C = TypeVar("C")
P = TypeVar("P")


async def paged(
    first: C,
    page: Callable[[C], Awaitable[P]],
    following: Callable[[P], C | None],
    *,
    too_long: str,
    max_pages: int = MAX_PAGES,
    error: Callable[[str], ConnectorError] = ConnectorUnavailable,
) -> AsyncIterator[P]:
    """Every page of a listing: `page(first)`, then `page(cursor)` while `following` finds a
    next cursor in the last one; past `max_pages`, `error(too_long)`."""
    cursor = first
    for _ in range(max_pages):
        data = await page(cursor)
        yield data
        found = following(data)
        if found is None:
            return
        cursor = found
    raise error(too_long)

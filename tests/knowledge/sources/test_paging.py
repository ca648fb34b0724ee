"""The connectors' shared reading loops: a listing followed page after page to its end and
never past `max_pages`; an item that fails skipped, five in a row (or refused credentials)
stopping the sync."""

from __future__ import annotations

import pytest

from knowledge.sources.connectors.base import BadCredentials, ConnectorError, ConnectorUnavailable
from knowledge.sources.connectors.failures import FailureStreak
from knowledge.sources.connectors.paging import paged

PAGES = {None: ("a", "c1"), "c1": ("b", "c2"), "c2": ("c", None)}


async def page(cursor: str | None) -> tuple[str, str | None]:
    return PAGES[cursor]


async def test_a_listing_is_followed_from_its_first_page_to_the_last() -> None:
    found = [data async for data, _ in paged(None, page, lambda p: p[1], too_long="too long")]
    assert found == ["a", "b", "c"]


async def test_a_cursor_that_never_ends_stops_at_max_pages_with_the_error_given() -> None:
    asked: list[int] = []

    async def endless(n: int) -> int:
        asked.append(n)
        return n

    with pytest.raises(ConnectorUnavailable, match="ran on"):
        _ = [n async for n in paged(0, endless, lambda n: n + 1, too_long="ran on", max_pages=3)]
    assert asked == [0, 1, 2]
    with pytest.raises(ConnectorError, match="ran on") as raised:
        _ = [
            n
            async for n in paged(
                0, endless, lambda n: n + 1, too_long="ran on", max_pages=1, error=ConnectorError
            )
        ]
    assert type(raised.value) is ConnectorError


def test_one_failure_is_skipped_five_in_a_row_stop_the_sync() -> None:
    streak = FailureStreak("pages")
    for _ in range(4):
        streak.failed(ConnectorError("one page"))
    streak.succeeded()  # a page read: the count starts again
    for _ in range(4):
        streak.failed(ConnectorError("one page"))
    with pytest.raises(ConnectorUnavailable, match="5 pages failed in a row; the last: down"):
        streak.failed(ConnectorError("down"))


def test_refused_credentials_stop_the_sync_at_once() -> None:
    refused = BadCredentials("401")
    with pytest.raises(BadCredentials) as raised:
        FailureStreak("items").failed(refused)
    assert raised.value is refused

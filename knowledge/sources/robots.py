"""Politeness toward a site: what its robots.txt lets LoreBot fetch, and how fast.

`read_robots` follows RFC 9309: a robots.txt that is missing (4xx) allows everything; one
that cannot be read (5xx, 429, a network error) allows nothing until it can; only its first
`MAX_ROBOTS_BYTES` (500 KiB, the RFC's minimum) are read, and parsed in a worker thread, so
a huge file can neither fill memory nor hold up the event loop. `Pacer` spaces
requests to each host (the crawl's delay, or the site's longer Crawl-delay) and holds a
host back when it answers 429 or 503 with Retry-After.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from protego import Protego
from yarl import URL

from knowledge.sources.fetch import ROBOT_NAME
from knowledge.sources.web import FetchError, HttpStatus, Page

DISALLOWED = "robots.txt disallows it"
UNREADABLE = "robots.txt could not be read"
MAX_CRAWL_DELAY = 30.0  # seconds; a site asking for more would never finish a crawl
MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309 asks crawlers to read at least 500 KiB of a robots.txt


@dataclass(frozen=True)
class Robots:
    """One site's rules for LoreBot. With no rules everything is allowed; when the file
    could not be read (`unreadable` says why) nothing is."""

    rules: Protego | None = None
    unreadable: str | None = None

    def allows(self, url: str) -> bool:
        if self.unreadable is not None:
            return False
        return self.rules is None or bool(self.rules.can_fetch(url, ROBOT_NAME))

    @property
    def refusal(self) -> str:
        """Why `allows` said no, fit for a report."""
        return UNREADABLE if self.unreadable is not None else DISALLOWED

    @property
    def sitemaps(self) -> tuple[str, ...]:
        return tuple(self.rules.sitemaps) if self.rules is not None else ()

    @property
    def crawl_delay(self) -> float | None:
        delay = self.rules.crawl_delay(ROBOT_NAME) if self.rules is not None else None
        return None if delay is None else min(float(delay), MAX_CRAWL_DELAY)


def robots_url(url: str) -> str:
    return str(URL(url).origin() / "robots.txt")


async def read_robots(get: Callable[[str], Awaitable[Page]], url: str) -> Robots:
    """The rules of the site `url` is on, read with `get` (which should read no more than
    `MAX_ROBOTS_BYTES`; more is cut here)."""
    try:
        page = await get(robots_url(url))
    except HttpStatus as exc:
        if 400 <= exc.status < 500 and exc.status != 429:
            return Robots()
        return Robots(unreadable=str(exc))
    except FetchError as exc:
        return Robots(unreadable=str(exc))
    text = page.body[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace")
    return Robots(await asyncio.to_thread(Protego.parse, text))


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a Retry-After header asks to wait (a number or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class Pacer:
    """Spaces the start of requests to each host by at least its delay."""

    def __init__(
        self,
        delay: float,
        *,
        sleep: Callable[[float], Awaitable[object]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._delay = delay
        self._sleep = sleep
        self._clock = clock
        self._delays: dict[str, float] = {}
        self._next: dict[str, float] = {}

    def slow_down(self, host: str, delay: float) -> None:
        """Use `delay` for `host` if it is longer than the crawl's (a Crawl-delay)."""
        self._delays[host] = max(self._delay, delay)

    def hold(self, host: str, seconds: float) -> None:
        """Send nothing to `host` for `seconds` (a Retry-After)."""
        self._next[host] = max(self._next.get(host, 0.0), self._clock() + seconds)

    async def wait(self, host: str) -> None:
        """Return when a request to `host` may start; the slot is taken before waiting."""
        now = self._clock()
        start = max(now, self._next.get(host, now))
        self._next[host] = start + self._delays.get(host, self._delay)
        if start > now:
            await self._sleep(start - now)

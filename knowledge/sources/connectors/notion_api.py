"""Notion's REST API over Lore's address-checked fetcher: authenticated JSON GETs and POSTs,
cursor pagination, Notion's rate limit kept to and honoured, errors translated.

- **Where**: `https://api.notion.com` (a setting, so that tests point it at a fake); every
  path is under `/v1`. The integration token travels only to that origin, checked before
  every request; a redirect elsewhere is refused.
- **Version**: every request sends `Notion-Version: 2026-03-11`, the newest version Notion
  documents. It has data sources (2025-09-03: a database holds one or more data sources,
  whose rows are pages; search returns data sources, not databases) and names trash
  `in_trash` only (2026-03-11). Nothing Lore reads changed between the two besides those.
- **Pagination**: lists answer `results`, `has_more` and `next_cursor`; the next page is asked
  with `start_cursor` (a query parameter for GETs, a body field for POSTs), 100 at a time.
  A search or query whose `request_status` is `incomplete` (Notion stopped before the end)
  is reported (`Listing.complete` False), so nothing is pruned on its word.
- **Rate limit**: Notion allows an average of three requests a second per integration and
  answers 429 `rate_limited` (or 529 `service_overload`) with `Retry-After` in seconds. The
  client spaces its requests to the rate it is given (`requests_per_second`; 0: as fast as
  answers come) and, when told to wait anyway, waits as long as `Retry-After` says (else 1,
  2, 4 … s), up to `RATE_LIMIT_RETRIES` times for one request: a storm of 429s slows a sync,
  it does not fail it. 500, 502, 503 and 504 are tried again `retries` times.

Why not notion-client (the Python SDK): it owns its HTTP client (httpx), so the address checks
of `knowledge.sources.fetch` (private addresses refused unless `LORE_CRAWL_ALLOW` says so, DNS
answers pinned) would not apply, and Lore needs no more of it than these few endpoints.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from knowledge.sources.connectors.api_client import ApiClient, Params
from knowledge.sources.connectors.base import (
    ApiOptions,
    BadCredentials,
    ConnectorError,
    ConnectorUnavailable,
    NoAccess,
)
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.notion_values import Json, Listing, NotFound
from knowledge.sources.connectors.paging import MAX_PAGES, paged
from knowledge.sources.fetch import FetchSession
from knowledge.sources.robots import Pacer, retry_after
from knowledge.sources.web import HttpStatus, Page

NOTION_VERSION = "2026-03-11"
PAGE_SIZE = 100  # Notion's largest page
LIMITED = frozenset({429, 529})
RETRIED = frozenset({500, 502, 503, 504})
RATE_LIMIT_RETRIES = 12
"""A request told to wait (429, 529) is tried again this many times before the sync gives up."""
LONGEST_WAIT = 300.0
"""The longest `Retry-After` waited for: a workspace-wide limit may ask for more than a minute."""


class SlowDowns:
    """When one request to Notion is tried again (its `Backoff`): told to wait (429, 529), up to
    `RATE_LIMIT_RETRIES` times; failing (500, 502, 503, 504), up to `retries` times, counted
    apart. It waits as `Retry-After` says, else 1, 2, 4 … s (30 at most)."""

    def __init__(self, retries: int, max_wait: float) -> None:
        self._retries = retries
        self._max_wait = max_wait
        self._limited = self._failed = 0

    def wait(self, exc: BaseException | None, attempt: int) -> float | None:
        if not isinstance(exc, HttpStatus):
            return None
        if exc.status in LIMITED:
            self._limited += 1
            return self._after(exc, self._limited, RATE_LIMIT_RETRIES)
        if exc.status in RETRIED:
            self._failed += 1
            return self._after(exc, self._failed, self._retries)
        return None

    def _after(self, exc: HttpStatus, count: int, retries: int) -> float | None:
        if count > retries:
            return None
        asked = retry_after(exc.retry_after)
        wait = min(2.0 ** (count - 1), 30.0) if asked is None else asked
        return wait if wait <= self._max_wait else None


class NotionApi(ApiClient):
    def __init__(
        self,
        session: FetchSession,
        base_url: str,
        credentials: Credentials,
        options: ApiOptions,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        sleep, rate = options.sleep, options.requests_per_second
        super().__init__(
            session, "Notion", base_url, keeps="its token never goes", sleep=sleep, note=options.note
        )
        self._authorization = credentials.authorization()
        self._retries = options.retries
        self._max_wait = max(options.max_wait, LONGEST_WAIT)
        self._pacer = Pacer(1.0 / rate, sleep=sleep, clock=clock) if rate > 0 else None

    # -- what the connector calls ----------------------------------------------------------

    async def get(self, path: str, params: Params | None = None) -> Json:
        return self.json_object(await self._send(self.url(path, params), None))

    async def post(self, path: str, body: Mapping[str, Any]) -> Json:
        return self.json_object(await self._send(self.url(path), dict(body)))

    async def results(
        self,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, str | int] | None = None,
        listing: Listing | None = None,
    ) -> AsyncIterator[Json]:
        """Every result of a paginated list, cursor after cursor: a POST with `body` (search,
        queries), else a GET with `params`. `listing` learns whether Notion listed everything."""

        async def page(cursor: str | None) -> Json:
            start: dict[str, str | int] = {
                "page_size": PAGE_SIZE,
                **({"start_cursor": cursor} if cursor else {}),
            }
            if body is not None:
                return await self.post(path, {**body, **start})
            return await self.get(path, {**(params or {}), **start})

        def following(data: Json) -> str | None:
            cursor = data.get("next_cursor")
            return cursor if data.get("has_more") and isinstance(cursor, str) and cursor else None

        too_long = f"a listing at {self.host} ran past {MAX_PAGES} pages of results"
        async for data in paged(None, page, following, too_long=too_long):
            for result in data.get("results") or []:
                if isinstance(result, dict):
                    yield result
            status = data.get("request_status")
            if listing is not None and isinstance(status, dict) and status.get("type") == "incomplete":
                listing.complete = False

    # -- requests ----------------------------------------------------------------------------

    async def _send(self, url: str, body: Json | None) -> Page:
        self.guard(url)
        headers = {
            "Authorization": self._authorization,
            "Notion-Version": NOTION_VERSION,
            "Accept": "application/json",
        }
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"

        async def attempt() -> Page:
            if self._pacer is not None:
                await self._pacer.wait(self.host)
            return await self.request(url, headers, data)

        try:
            page = await self.retried(attempt, SlowDowns(self._retries, self._max_wait))
        except HttpStatus as exc:
            raise self._translated(exc) from exc
        return self.unredirected(page)

    def _translated(self, exc: HttpStatus) -> ConnectorError:
        code, said = _error(exc.detail)
        why = f" (“{said}”)" if said else ""
        if exc.status == 401:
            return BadCredentials(
                f"Notion at {self.host} refused the integration token (401){why}: copy the internal "
                "integration secret from the integration's page (notion.so/profile/integrations) and "
                "connect again"
            )
        if exc.status == 403:
            return NoAccess(
                f"Notion at {self.host} answered 403{why}: the integration lacks the capability to read "
                "this; give it “Read content” (and “Read user information” for names) in its settings"
            )
        if exc.status == 404:
            return NotFound(
                f"Notion at {self.host} found nothing there{why}: not shared with the integration, or gone"
            )
        if exc.status in LIMITED:
            return ConnectorUnavailable(
                f"Notion at {self.host} kept asking Lore to slow down ({exc.status}); the next sync goes on"
            )
        if exc.status == 400:
            return ConnectorError(f"Notion at {self.host} refused the request ({code or 400}){why}")
        return ConnectorUnavailable(f"Notion at {self.host} answered {exc.status}{why}; try again later")


def _error(detail: str) -> tuple[str, str]:
    """Notion's error `code` and `message` from an error body, else ('', '')."""
    try:
        data = json.loads(detail)
    except ValueError:
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    message = " ".join(str(data.get("message") or "").split())[:200]
    return str(data.get("code") or ""), message

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

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import quote, urlencode

from yarl import URL

from knowledge.sources.connectors.base import BadCredentials, ConnectorError, ConnectorUnavailable, NoAccess
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.notion_values import Json, Listing, NotFound
from knowledge.sources.fetch import FetchSession
from knowledge.sources.robots import Pacer, retry_after
from knowledge.sources.web import FetchError, HttpStatus, OffSite, Page, PageTooLarge, Refused

log = logging.getLogger(__name__)
Sleep = Callable[[float], Awaitable[object]]
NOTION_VERSION = "2026-03-11"
PAGE_SIZE = 100  # Notion's largest page
LIMITED = frozenset({429, 529})
RETRIED = frozenset({500, 502, 503, 504})
RATE_LIMIT_RETRIES = 12
"""A request told to wait (429, 529) is tried again this many times before the sync gives up."""
LONGEST_WAIT = 300.0
"""The longest `Retry-After` waited for: a workspace-wide limit may ask for more than a minute."""
MAX_PAGES = 10_000
"""Result pages followed for one listing at most: a cursor loop cannot run forever."""


class NotionApi:
    def __init__(
        self,
        session: FetchSession,
        base_url: str,
        credentials: Credentials,
        *,
        retries: int = 3,
        max_wait: float = 60.0,
        sleep: Sleep = asyncio.sleep,
        note: Callable[[str], Awaitable[None]] | None = None,
        requests_per_second: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._session = session
        self.base_url = base_url.rstrip("/")
        self._origin = URL(self.base_url).origin()
        self.host = URL(self.base_url).host or self.base_url
        self._authorization = credentials.authorization()
        self._retries = retries
        self._max_wait = max(max_wait, LONGEST_WAIT)
        self._sleep = sleep
        self._note = note
        self._pacer = (
            Pacer(1.0 / requests_per_second, sleep=sleep, clock=clock) if requests_per_second > 0 else None
        )
        self.requests = 0
        """Requests sent (retries included): what a sync cost."""

    def url(self, path: str, params: Mapping[str, str | int] | None = None) -> str:
        target = self.base_url + path
        if params:
            target += "?" + urlencode(params, quote_via=quote)
        return target

    # -- what the connector calls ----------------------------------------------------------

    async def get(self, path: str, params: Mapping[str, str | int] | None = None) -> Json:
        return await self._json(self.url(path, params), None)

    async def post(self, path: str, body: Mapping[str, Any]) -> Json:
        return await self._json(self.url(path), dict(body))

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
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            if body is not None:
                sent = {**body, "page_size": PAGE_SIZE, **({"start_cursor": cursor} if cursor else {})}
                data = await self.post(path, sent)
            else:
                query = {
                    **(params or {}),
                    "page_size": PAGE_SIZE,
                    **({"start_cursor": cursor} if cursor else {}),
                }
                data = await self.get(path, query)
            for result in data.get("results") or []:
                if isinstance(result, dict):
                    yield result
            status = data.get("request_status")
            if listing is not None and isinstance(status, dict) and status.get("type") == "incomplete":
                listing.complete = False
            following = data.get("next_cursor")
            if not data.get("has_more") or not isinstance(following, str) or not following:
                return
            cursor = following
        raise ConnectorUnavailable(f"a listing at {self.host} ran past {MAX_PAGES} pages of results")

    # -- requests ----------------------------------------------------------------------------

    async def _json(self, url: str, body: Json | None) -> Json:
        page = await self._send(url, body)
        try:
            data = json.loads(page.body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConnectorUnavailable(
                f"{self.base_url} did not answer like Notion's API (no JSON); check the address"
            ) from exc
        if not isinstance(data, dict):
            raise ConnectorUnavailable(f"{self.base_url} answered JSON that is not an object")
        return data

    async def _send(self, url: str, body: Json | None) -> Page:
        if not self._same_origin(url):  # before any request: the token never leaves the origin
            raise ConnectorError(
                f"Notion pointed to another site ({URL(url).host}), where its token never goes"
            )
        headers = {
            "Authorization": self._authorization,
            "Notion-Version": NOTION_VERSION,
            "Accept": "application/json",
        }
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        limited = failed = 0
        while True:
            if self._pacer is not None:
                await self._pacer.wait(self.host)
            try:
                self.requests += 1
                page = await self._request(url, data, headers)
            except HttpStatus as exc:
                if exc.status in LIMITED:
                    limited += 1
                    wait = self._wait(exc, limited, RATE_LIMIT_RETRIES)
                else:
                    failed += 1
                    wait = self._wait(exc, failed, self._retries) if exc.status in RETRIED else None
                if wait is None:
                    raise self._translated(exc) from exc
                await self._pause(wait, f"Notion answered {exc.status}")
                continue
            if page.status in (301, 302, 303, 307, 308):
                raise ConnectorUnavailable(f"Notion at {self.host} redirected the request; check the address")
            return page

    async def _request(self, url: str, data: bytes | None, headers: Mapping[str, str]) -> Page:
        try:
            if data is None:
                return await self._session.get(url, headers, within=self._same_origin)
            return await self._session.post(url, data, headers)
        except HttpStatus:
            raise
        except OffSite as exc:
            raise ConnectorError(
                f"Notion redirected to another site ({URL(exc.url).host}); Lore stops there"
            ) from exc
        except Refused as exc:
            raise ConnectorError(f"Lore may not connect to {self.host}: {exc}") from exc
        except PageTooLarge as exc:
            raise ConnectorError(f"too large: {exc}") from exc
        except FetchError as exc:
            raise ConnectorUnavailable(f"I couldn't reach Notion at {self.host}: {exc}") from exc

    def _same_origin(self, url: str) -> bool:
        try:
            return URL(url).origin() == self._origin
        except ValueError:
            return False

    def _wait(self, exc: HttpStatus, attempt: int, retries: int) -> float | None:
        """Seconds to wait before the `attempt`th retry, or None to give up."""
        if attempt > retries:
            return None
        asked = retry_after(exc.retry_after)
        wait = min(2.0 ** (attempt - 1), 30.0) if asked is None else asked
        return wait if wait <= self._max_wait else None

    async def _pause(self, seconds: float, why: str) -> None:
        await self.say(f"{why}; waiting {seconds:g} s")
        if seconds > 0:
            await self._sleep(seconds)

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

    async def say(self, message: str) -> None:
        """Tell whoever follows the sync (a wait, a part not read); logged too."""
        log.info("%s: %s", self.host, message)
        if self._note is not None:
            await self._note(message)


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

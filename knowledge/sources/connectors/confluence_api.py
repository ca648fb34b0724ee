"""Confluence's REST API over Lore's SSRF-safe fetcher: authenticated JSON GETs, results
followed through `_links.next` to the last page, rate limits honoured, errors translated.

Why not atlassian-python-api: it is synchronous (requests), so every call would need a
thread, and it hides what this layer must control: Retry-After on 429, pagination, and the
address checks of `knowledge.sources.fetch` (private and loopback addresses refused unless
`LORE_CRAWL_ALLOW` says otherwise, DNS answers pinned). Lore already speaks aiohttp.

Credentials travel only to the base URL's origin, checked before every request, the first
one included: a link or redirect elsewhere is refused for API calls, and for attachment
downloads (Cloud hands those to a media host with a signed link; a listing may name any
absolute link) fetched without them. Nothing here logs a header.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import quote, urlencode

from yarl import URL

from knowledge.sources.connectors.base import BadCredentials, ConnectorError, ConnectorUnavailable, NoAccess
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.fetch import FetchSession
from knowledge.sources.retry import RetryPolicy, retried
from knowledge.sources.web import FetchError, HttpStatus, OffSite, Page, PageTooLarge, Refused

log = logging.getLogger(__name__)
Json = dict[str, Any]
Sleep = Callable[[float], Awaitable[object]]
RETRIED = frozenset({429, 502, 503, 504})
MAX_PAGES = 10_000
"""Result pages followed for one listing at most: a `_links.next` loop cannot run forever."""


class NotFound(ConnectorError):
    """The API answered 404 for something asked by id."""


class LeftOrigin(ConnectorError):
    """A link or redirect pointed away from the base URL's origin (`url`), where credentials never go."""

    def __init__(self, url: str) -> None:
        super().__init__(
            f"Confluence pointed to another site ({URL(url).host}), where its credentials never go"
        )
        self.url = url


class ConfluenceApi:
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
    ) -> None:
        self._session = session
        self.base_url = base_url.rstrip("/")
        self._origin = URL(self.base_url).origin()
        self._headers = {"Authorization": credentials.authorization(), "Accept": "application/json"}
        self._retry = RetryPolicy(RETRIED, retries, max_wait)
        self._sleep = sleep
        self._note = note
        self.host = URL(self.base_url).host or self.base_url

    def url(self, path: str, params: Mapping[str, str | int] | None = None) -> str:
        """`path` under the base URL (or an absolute link on the same origin), with `params`."""
        target = path if "://" in path else self.base_url + path
        if params:
            target += ("&" if "?" in target else "?") + urlencode(params, quote_via=quote)
        return target

    async def get_json(self, path: str, params: Mapping[str, str | int] | None = None) -> Json:
        data = await self._json(path, params)
        if not isinstance(data, dict):
            raise ConnectorUnavailable(f"{self.base_url} answered JSON that is not an object")
        return data

    async def get_list(self, path: str, params: Mapping[str, str | int] | None = None) -> list[Json]:
        """A resource that answers a JSON array (of objects; anything else in it is left out)."""
        data = await self._json(path, params)
        if not isinstance(data, list):
            raise ConnectorUnavailable(f"{self.base_url} answered JSON that is not a list")
        return [item for item in data if isinstance(item, dict)]

    async def _json(self, path: str, params: Mapping[str, str | int] | None) -> object:
        page = await self._get(self.url(path, params))
        try:
            return json.loads(page.body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConnectorUnavailable(
                f"{self.base_url} did not answer like Confluence's REST API (no JSON); check the "
                "base URL (on Cloud it ends in /wiki)"
            ) from exc

    async def results(self, path: str, params: Mapping[str, str | int]) -> AsyncIterator[Json]:
        """Every result of a paginated listing, following `_links.next` to the end."""
        url: str | None = self.url(path, params)
        for _ in range(MAX_PAGES):
            if url is None:
                return
            data = await self.get_json(url)
            for result in data.get("results") or []:
                if isinstance(result, dict):
                    yield result
            url = self._next(data)
        raise ConnectorUnavailable(f"a listing at {self.host} ran past {MAX_PAGES} pages of results")

    def _next(self, data: Json) -> str | None:
        following = (data.get("_links") or {}).get("next")
        if not isinstance(following, str) or not following:
            return None
        if "://" not in following:
            return self.base_url + following
        if URL(following).origin() != self._origin:
            raise ConnectorError(
                f"Confluence pointed the next page of results to another site ({URL(following).host})"
            )
        return following

    async def download(self, url: str, max_bytes: int) -> bytes:
        """An attachment's bytes: with credentials on the base URL's origin; a redirect to
        another host (Cloud's media service) is followed without them."""
        try:
            page = await self._get(url, max_bytes=max_bytes)
        except LeftOrigin as exc:
            page = await self._get(exc.url, max_bytes=max_bytes, signed=False)
        return page.body

    async def _get(self, url: str, *, max_bytes: int | None = None, signed: bool = True) -> Page:
        if signed and not self._same_origin(url):
            raise LeftOrigin(url)  # before any request: the credentials never leave the origin
        headers = self._headers if signed else {"Accept": "*/*"}
        within = self._same_origin if signed else None
        try:
            page = await retried(
                lambda: self._session.get(url, headers, within=within),
                self._retry,
                sleep=self._sleep,
                before_wait=self._waiting,
            )
        except HttpStatus as exc:
            raise self._translated(exc) from exc
        except OffSite as exc:
            raise LeftOrigin(exc.url) from exc
        except Refused as exc:
            raise ConnectorError(f"Lore may not connect to {self.host}: {exc}") from exc
        except PageTooLarge as exc:
            raise ConnectorError(f"too large: {exc}") from exc
        except FetchError as exc:
            raise ConnectorUnavailable(f"I couldn't reach Confluence at {self.host}: {exc}") from exc
        if max_bytes is not None and len(page.body) > max_bytes:
            raise ConnectorError(f"too large: over {max_bytes // (1024 * 1024)} MB")
        return page

    async def _waiting(self, exc: HttpStatus, wait: float) -> None:
        await self._say(f"Confluence answered {exc.status}; trying again in {wait:g} s")

    def _same_origin(self, url: str) -> bool:
        try:
            return URL(url).origin() == self._origin
        except ValueError:  # no host, or not absolute: not this origin
            return False

    def _translated(self, exc: HttpStatus) -> ConnectorError:
        if exc.status == 401:
            return BadCredentials(
                f"Confluence at {self.host} refused the credentials (401): check the account's email "
                "and API token (Cloud) or the personal access token (Data Center), then connect again"
            )
        if exc.status == 403:
            return NoAccess(
                f"Confluence at {self.host} answered 403: the account may not read this; check its "
                "permissions in Confluence"
            )
        if exc.status == 404:
            return NotFound(f"Confluence at {self.host} has nothing there (404)")
        if exc.status == 429:
            return ConnectorUnavailable(
                f"Confluence at {self.host} kept asking Lore to slow down (429); it will try again at the next refresh"
            )
        return ConnectorUnavailable(f"Confluence at {self.host} answered {exc.status}; try again later")

    async def _say(self, message: str) -> None:
        log.info("%s: %s", self.host, message)
        if self._note is not None:
            await self._note(message)

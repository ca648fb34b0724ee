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

from collections.abc import AsyncIterator, Mapping
from typing import Any

from yarl import URL

from knowledge.sources.connectors.api_client import ApiClient
from knowledge.sources.connectors.base import (
    ApiOptions,
    BadCredentials,
    ConnectorError,
    ConnectorUnavailable,
    NoAccess,
)
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.paging import MAX_PAGES, paged
from knowledge.sources.fetch import FetchSession
from knowledge.sources.retry import RetryPolicy, retried
from knowledge.sources.web import FetchError, HttpStatus, OffSite, Page

Json = dict[str, Any]
RETRIED = frozenset({429, 502, 503, 504})


class NotFound(ConnectorError):
    """The API answered 404 for something asked by id."""


class LeftOrigin(ConnectorError):
    """A link or redirect pointed away from the base URL's origin (`url`), where credentials never go."""

    def __init__(self, url: str) -> None:
        super().__init__(
            f"Confluence pointed to another site ({URL(url).host}), where its credentials never go"
        )
        self.url = url


class ConfluenceApi(ApiClient):
    def __init__(
        self,
        session: FetchSession,
        base_url: str,
        credentials: Credentials,
        options: ApiOptions,
    ) -> None:
        super().__init__(
            session,
            "Confluence",
            base_url,
            sleep=options.sleep,
            note=options.note,
            hint=" (on Cloud it ends in /wiki)",
        )
        self._headers = {"Authorization": credentials.authorization(), "Accept": "application/json"}
        self._retry = RetryPolicy(RETRIED, options.retries, options.max_wait)

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
        return self.decoded(await self._get(self.url(path, params)))

    async def results(self, path: str, params: Mapping[str, str | int]) -> AsyncIterator[Json]:
        """Every result of a paginated listing, following `_links.next` to the end."""
        too_long = f"a listing at {self.host} ran past {MAX_PAGES} pages of results"
        async for data in paged(self.url(path, params), self.get_json, self._next, too_long=too_long):
            for result in data.get("results") or []:
                if isinstance(result, dict):
                    yield result

    def _next(self, data: Json) -> str | None:
        following = (data.get("_links") or {}).get("next")
        if not isinstance(following, str) or not following:
            return None
        if "://" not in following:
            return self.base_url + following
        if not self.allowed(following):
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
        if signed and not self.allowed(url):
            raise LeftOrigin(url)  # before any request: the credentials never leave the origin
        headers = self._headers if signed else {"Accept": "*/*"}
        within = self.allowed if signed else None
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
        except FetchError as exc:
            raise self.fetch_error(exc) from exc
        if max_bytes is not None and len(page.body) > max_bytes:
            raise ConnectorError(f"too large: over {max_bytes // (1024 * 1024)} MB")
        return page

    async def _waiting(self, exc: HttpStatus, wait: float) -> None:
        await self.say(f"Confluence answered {exc.status}; trying again in {wait:g} s")

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

"""What the connectors' API clients share: `ApiClient`, the base of the clients of GitHub,
Notion, Google Drive and Confluence (`github_api.py`, `notion_api.py`, `drive_api.py`,
`confluence_api.py`). What a service's client adds is its own: its headers and credentials,
its rate-limit rules (a `Backoff`), the shape of its error bodies and the words of its errors.

- **Origins**: credentials travel only to the client's origins, checked before every request
  (`guard`) and on every redirect a GET follows; a POST is not redirected (`unredirected`).
- **Requests**: through Lore's address-checked fetcher, counted (`requests`: what a sync
  cost), tried again as the service's `Backoff` says (`knowledge.sources.retry`, tenacity),
  each wait told to whoever follows the sync. The fetcher's own errors (an address refused,
  a redirect elsewhere, too large, unreachable) become `ConnectorError`s naming the service;
  an `HttpStatus` is the service's client's to translate, as it alone reads its error bodies.
- **Answers**: JSON, or a `ConnectorUnavailable` saying the address is not the service's API.

Pagination is `paging.py`'s: it needs no HTTP client, and the listings import it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlencode

from yarl import URL

from knowledge.sources.connectors.base import ConnectorError, ConnectorUnavailable
from knowledge.sources.fetch import FetchSession
from knowledge.sources.retry import Backoff, retried
from knowledge.sources.web import FetchError, HttpStatus, OffSite, Page, PageTooLarge, Refused

log = logging.getLogger(__name__)
Json = dict[str, Any]
Sleep = Callable[[float], Awaitable[object]]
Note = Callable[[str], Awaitable[None]]
Params = Mapping[str, str | int | bool]
REDIRECTS = frozenset({301, 302, 303, 307, 308})


class ApiClient:
    """Requests to one service's API (`label`: "GitHub") at `base_url`, and the other
    origins in `also` (Google's Sheets and Directory); `keeps` ends the sentence refusing an
    address elsewhere ("where its token never goes")."""

    def __init__(
        self,
        session: FetchSession,
        label: str,
        base_url: str,
        *,
        also: Iterable[str] = (),
        keeps: str = "its credentials never go",
        hint: str = "",
        sleep: Sleep = asyncio.sleep,
        note: Note | None = None,
    ) -> None:
        self.label = label
        self.base_url = base_url.rstrip("/")
        self.host = URL(self.base_url).host or self.base_url
        self._origins = frozenset(URL(u).origin() for u in (self.base_url, *also))
        self._session = session
        self._keeps = keeps
        self._hint = hint
        self._sleep = sleep
        self._note = note
        self.requests = 0
        """Requests sent (retries included, token requests aside): what a sync cost."""

    def allowed(self, url: str) -> bool:
        """Whether `url` is on one of the origins the credentials may go to."""
        try:
            return URL(url).origin() in self._origins
        except ValueError:  # no host, or not absolute: not an origin of this service
            return False

    def url(self, path: str, params: Params | None = None) -> str:
        """`path` under the API root (or an absolute address), with `params` (booleans as
        `true`/`false`)."""
        target = path if "://" in path else self.base_url + path
        if params:
            values = {k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()}
            target += ("&" if "?" in target else "?") + urlencode(values, quote_via=quote)
        return target

    def guard(self, url: str) -> None:
        """Refuse, before any request, an address where the credentials may not go."""
        if not self.allowed(url):
            raise ConnectorError(
                f"{self.label} pointed to another site ({URL(url).host}), where {self._keeps}"
            )

    async def request(self, url: str, headers: Mapping[str, str], body: bytes | None = None) -> Page:
        """One GET (a POST with `body`), counted; a GET's redirects stay on the origins."""
        self.requests += 1
        if body is None:
            return await self._session.get(url, headers, within=self.allowed)
        return await self._session.post(url, body, headers)

    async def retried(self, attempt: Callable[[], Awaitable[Page]], policy: Backoff) -> Page:
        """`attempt()`, tried again as `policy` says, each wait told first (`_waiting`). An
        `HttpStatus` that is not tried again is raised as it came; the fetcher's other errors
        are translated."""
        try:
            return await retried(attempt, policy, sleep=self._nap, before_wait=self._waiting)
        except HttpStatus:
            raise
        except FetchError as exc:
            raise self.fetch_error(exc) from exc

    def fetch_error(self, exc: FetchError) -> ConnectorError:
        """The fetcher's error (other than an `HttpStatus`) as a `ConnectorError`."""
        if isinstance(exc, OffSite):
            return ConnectorError(
                f"{self.label} redirected to another site ({URL(exc.url).host}); Lore stops there"
            )
        if isinstance(exc, Refused):
            return ConnectorError(f"Lore may not connect to {self.host}: {exc}")
        if isinstance(exc, PageTooLarge):
            return ConnectorError(f"too large: {exc}")
        return ConnectorUnavailable(f"I couldn't reach {self.label} at {self.host}: {exc}")

    def unredirected(self, page: Page) -> Page:
        """`page`, unless it is a redirect the fetcher did not follow (a POST's)."""
        if page.status in REDIRECTS:
            raise ConnectorUnavailable(
                f"{self.label} at {self.host} redirected the request; check the address"
            )
        return page

    def decoded(self, page: Page) -> Any:
        """The page's JSON; else the address is not the service's API."""
        try:
            return json.loads(page.body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConnectorUnavailable(
                f"{self.base_url} did not answer like {self.label}'s API (no JSON); check the address{self._hint}"
            ) from exc

    def json_object(self, page: Page) -> Json:
        data = self.decoded(page)
        if not isinstance(data, dict):
            raise ConnectorUnavailable(f"{self.base_url} answered JSON that is not an object")
        return data

    async def pause(self, seconds: float, why: str) -> None:
        """Wait `seconds`, having told why."""
        await self.say(f"{why}; waiting {seconds:g} s")
        await self._nap(seconds)

    async def say(self, message: str) -> None:
        """Tell whoever follows the sync (a wait, a part not read); logged too."""
        log.info("%s: %s", self.host, message)
        if self._note is not None:
            await self._note(message)

    async def _waiting(self, exc: HttpStatus, seconds: float) -> None:
        """Tell of a wait before a request is tried again ("GitHub answered 429; waiting 2 s")."""
        await self.say(f"{self.label} answered {exc.status}; waiting {seconds:g} s")

    async def _nap(self, seconds: float) -> None:
        if seconds > 0:
            await self._sleep(seconds)

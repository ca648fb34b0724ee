"""GitHub's REST (v3) and GraphQL APIs over Lore's address-checked fetcher: authenticated
requests, `Link` pagination, conditional requests, rate limits, errors translated.

- **Where**: the API root is `https://api.github.com`, or `https://HOST/api/v3` on GitHub
  Enterprise Server, whose GraphQL endpoint is then `https://HOST/api/graphql`. Credentials
  (a token, or a GitHub App's installation token, `github_app.py`) travel only to that
  origin, checked before every request; a `Link` or redirect elsewhere is refused.
- **Conditional requests**: given the ETag of the last answer, a GET sends `If-None-Match`;
  a 304 carries no body and does not count against the rate limit.
- **Rate limits**: every answer's `X-RateLimit-Remaining`/`-Reset` are kept per resource
  (`core`, `graphql`); when none remain, the next request waits for the reset. A 403 or
  429 that is a rate limit (GitHub's message says "rate limit", or `Retry-After` is set, or
  nothing remains) waits as GitHub asks: `Retry-After`, else the reset, else a minute,
  doubling; any other 403 is `NoAccess`. Waits are told to whoever listens (`note`).

Why not PyGithub or githubkit: the first is synchronous (a thread per call), and both own
their HTTP client, so the address checks of `knowledge.sources.fetch` (private addresses
refused unless `LORE_CRAWL_ALLOW` says otherwise, DNS answers pinned) would not apply.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from yarl import URL

from knowledge.sources.connectors.base import BadCredentials, ConnectorError, ConnectorUnavailable, NoAccess
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.github_app import AppTokens
from knowledge.sources.connectors.github_repos import NotFound
from knowledge.sources.fetch import FetchSession
from knowledge.sources.robots import retry_after
from knowledge.sources.web import FetchError, HttpStatus, OffSite, Page, PageTooLarge, Refused

log = logging.getLogger(__name__)
Json = dict[str, Any]
Sleep = Callable[[float], Awaitable[object]]
API_VERSION = "2022-11-28"
MEDIA_TYPE = "application/vnd.github+json"
LIMIT_WAIT = 3600.0
"""The longest wait for a rate limit: a primary limit's window is an hour."""
SECONDARY_WAIT = 60.0
"""A secondary limit without Retry-After: at least a minute, doubling (GitHub's advice)."""
RETRIED = frozenset({500, 502, 503, 504})
_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="?([\w ]+)"?')
_LIMITED = re.compile(r"rate limit|abuse", re.I)


@dataclass(frozen=True)
class Response:
    """A GET's answer: its JSON (None when `not_modified`), its ETag, its next page."""

    data: Any
    etag: str | None
    next: str | None
    not_modified: bool = False


def graphql_url(base_url: str) -> str:
    """`…/api/v3` → `…/api/graphql` (Enterprise Server); else `{base}/graphql`."""
    if base_url.endswith("/api/v3"):
        return base_url.removesuffix("/v3") + "/graphql"
    return base_url + "/graphql"


def next_link(header: str | None) -> str | None:
    """The `rel="next"` address of a `Link` header."""
    for target, rel in _LINK.findall(header or ""):
        if "next" in str(rel).split():
            return str(target)
    return None


class GitHubApi:
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
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._session = session
        self.base_url = base_url.rstrip("/")
        self.graphql_url = graphql_url(self.base_url)
        self._origin = URL(self.base_url).origin()
        self.host = URL(self.base_url).host or self.base_url
        self._credentials = credentials
        self.app = AppTokens(credentials, self._exchange, clock) if credentials.is_app else None
        self._retries = retries
        self._max_wait = max(max_wait, LIMIT_WAIT)
        self._sleep = sleep
        self._note = note
        self._clock = clock
        self._limits: dict[str, tuple[int, float]] = {}
        """Per resource: requests remaining, and when the window resets (epoch seconds)."""
        self.requests = 0
        """Requests sent (304s included): what a sync cost."""

    def url(self, path: str, params: Mapping[str, str | int] | None = None) -> str:
        """`path` under the API root (or an absolute link on its origin), with `params`."""
        target = path if "://" in path else self.base_url + path
        if params:
            target += ("&" if "?" in target else "?") + urlencode(params, quote_via=quote)
        return target

    # -- what the connector calls ----------------------------------------------------------

    async def get(
        self, path: str, params: Mapping[str, str | int] | None = None, *, etag: str | None = None
    ) -> Response:
        """A GET of the REST API; with `etag`, conditional (`not_modified` on a 304)."""
        headers = {"If-None-Match": etag} if etag else {}
        page = await self._send(self.url(path, params), None, headers, "core")
        following = next_link(page.headers.get("Link"))
        if following is not None and not self._same_origin(following):
            raise ConnectorError(
                f"GitHub pointed the next page of results to another site ({URL(following).host})"
            )
        found_etag = page.headers.get("ETag") or etag
        if page.status == 304:
            return Response(None, found_etag, following, not_modified=True)
        return Response(self._json(page), found_etag, following)

    async def get_json(self, path: str, params: Mapping[str, str | int] | None = None) -> Any:
        return (await self.get(path, params)).data

    async def graphql(self, query: str, variables: Mapping[str, object]) -> Json:
        """A GraphQL query's `data`; its errors as `ConnectorError`s (NOT_FOUND: `NotFound`)."""
        body = json.dumps({"query": query, "variables": dict(variables)}).encode()
        for attempt in range(self._retries + 1):
            page = await self._send(self.graphql_url, body, {"Content-Type": "application/json"}, "graphql")
            answer = self._json(page)
            errors = answer.get("errors") if isinstance(answer, dict) else None
            if not errors:
                data = answer.get("data") if isinstance(answer, dict) else None
                return data if isinstance(data, dict) else {}
            kinds = {str(e.get("type") or "") for e in errors if isinstance(e, dict)}
            if "RATE_LIMITED" in kinds and attempt < self._retries:
                await self._pause(self._until_reset("graphql") or SECONDARY_WAIT, "GraphQL rate limit")
                continue
            message = "; ".join(str(e.get("message") or "")[:200] for e in errors if isinstance(e, dict))
            if "NOT_FOUND" in kinds:
                raise NotFound(f"GitHub's GraphQL API found nothing there: {message}")
            raise ConnectorError(f"GitHub's GraphQL API refused the query: {message}")
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def app_get(self, path: str) -> Any:
        """A GET as the GitHub App itself (its JWT), not as an installation."""
        assert self.app is not None
        page = await self._send(self.url(path), None, {"Authorization": f"Bearer {self.app.jwt()}"}, "core")
        return self._json(page)

    # -- requests ----------------------------------------------------------------------------

    async def _exchange(self, app_jwt: str) -> tuple[str, str]:
        """The installation token for this JWT, and its expiry."""
        path = f"/app/installations/{self._credentials.installation_id}/access_tokens"
        page = await self._send(self.url(path), b"", {"Authorization": f"Bearer {app_jwt}"}, "core")
        data = self._json(page)
        token = data.get("token") if isinstance(data, dict) else None
        if not isinstance(token, str) or not token:
            raise ConnectorUnavailable(f"GitHub at {self.host} gave the app no installation token")
        return token, str(data.get("expires_at") or "")

    async def _send(self, url: str, body: bytes | None, headers: Mapping[str, str], resource: str) -> Page:
        if not self._same_origin(url):  # before any request: the credentials never leave the origin
            raise ConnectorError(
                f"GitHub pointed to another site ({URL(url).host}), where its credentials never go"
            )
        renewed = False
        for attempt in range(self._retries + 1):
            await self._respect(resource)
            sent = {"Accept": MEDIA_TYPE, "X-GitHub-Api-Version": API_VERSION, **headers}
            if "Authorization" not in sent:
                sent["Authorization"] = await self._authorization()
            try:
                self.requests += 1
                page = await self._request(url, body, sent)
            except HttpStatus as exc:
                self._observe(exc.headers)
                if (
                    exc.status == 401
                    and self.app is not None
                    and "Authorization" not in headers
                    and not renewed
                ):
                    self.app.forget()  # revoked, or expired early: mint another, once
                    renewed = True
                    continue
                wait = self._wait(exc, attempt, resource)
                if wait is None:
                    raise self._translated(exc) from exc
                await self._pause(wait, f"GitHub answered {exc.status}")
                continue
            self._observe(page.headers)
            if page.status in (301, 302, 303, 307, 308):  # a POST is not redirected
                raise ConnectorUnavailable(f"GitHub at {self.host} redirected the request; check the address")
            return page
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _request(self, url: str, body: bytes | None, headers: Mapping[str, str]) -> Page:
        try:
            if body is None:
                return await self._session.get(url, headers, within=self._same_origin)
            return await self._session.post(url, body, headers)
        except HttpStatus:
            raise
        except OffSite as exc:
            raise ConnectorError(
                f"GitHub redirected to another site ({URL(exc.url).host}); Lore stops there"
            ) from exc
        except Refused as exc:
            raise ConnectorError(f"Lore may not connect to {self.host}: {exc}") from exc
        except PageTooLarge as exc:
            raise ConnectorError(f"too large: {exc}") from exc
        except FetchError as exc:
            raise ConnectorUnavailable(f"I couldn't reach GitHub at {self.host}: {exc}") from exc

    async def _authorization(self) -> str:
        if self.app is not None:
            return await self.app.authorization()
        return self._credentials.authorization()

    def _json(self, page: Page) -> Any:
        try:
            return json.loads(page.body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConnectorUnavailable(
                f"{self.base_url} did not answer like GitHub's API (no JSON); check the address "
                "(GitHub Enterprise Server: https://HOST/api/v3)"
            ) from exc

    def _same_origin(self, url: str) -> bool:
        try:
            return URL(url).origin() == self._origin
        except ValueError:
            return False

    # -- rate limits -------------------------------------------------------------------------

    def _observe(self, headers: Mapping[str, str]) -> None:
        remaining, reset = headers.get("X-RateLimit-Remaining"), headers.get("X-RateLimit-Reset")
        if remaining is None or reset is None or not remaining.isdigit():
            return
        try:
            self._limits[headers.get("X-RateLimit-Resource") or "core"] = (int(remaining), float(reset))
        except ValueError:
            return

    def _until_reset(self, resource: str) -> float | None:
        """Seconds until the resource's window resets, when none of it remains."""
        remaining, reset = self._limits.get(resource, (1, 0.0))
        if remaining > 0:
            return None
        return max(1.0, reset - self._clock() + 1.0)

    async def _respect(self, resource: str) -> None:
        wait = self._until_reset(resource)
        if wait is None:
            return
        if wait > self._max_wait:
            raise ConnectorUnavailable(
                f"GitHub's rate limit at {self.host} resets in {wait / 60:.0f} minutes; the next sync goes on"
            )
        await self._pause(wait, "GitHub's rate limit is used up")
        self._limits.pop(resource, None)

    def _wait(self, exc: HttpStatus, attempt: int, resource: str) -> float | None:
        """Seconds to wait before trying again, or None to give up."""
        if attempt >= self._retries:
            return None
        wait: float | None = None
        if exc.status in (403, 429):
            wait = retry_after(exc.retry_after)
            if wait is None:
                wait = self._until_reset(resource)
            if wait is None and (exc.status == 429 or _LIMITED.search(exc.detail)):
                wait = SECONDARY_WAIT * 2.0**attempt
        elif exc.status in RETRIED:
            wait = 2.0**attempt
        return wait if wait is not None and wait <= self._max_wait else None

    async def _pause(self, seconds: float, why: str) -> None:
        await self.say(f"{why}; waiting {seconds:g} s")
        if seconds > 0:
            await self._sleep(seconds)

    def _translated(self, exc: HttpStatus) -> ConnectorError:
        said = " ".join(_message(exc.detail).split())[:200]
        why = f" (“{said}”)" if said else ""
        if exc.status == 401:
            return BadCredentials(
                f"GitHub at {self.host} refused the credentials (401){why}: check the token, or the "
                "GitHub App's id, installation id and private key, then connect again"
            )
        if exc.status == 403 and not _LIMITED.search(exc.detail):
            return NoAccess(
                f"GitHub at {self.host} answered 403{why}: the credentials may not read this; check the "
                "token's repository access and its read permissions (Metadata, Contents, Issues, "
                "Pull requests, Discussions)"
            )
        if exc.status == 404:
            return NotFound(f"GitHub at {self.host} has nothing there for these credentials (404)")
        if exc.status in (403, 429):
            return ConnectorUnavailable(
                f"GitHub at {self.host} kept rate-limiting Lore ({exc.status}); the next sync goes on"
            )
        return ConnectorUnavailable(f"GitHub at {self.host} answered {exc.status}{why}; try again later")

    async def say(self, message: str) -> None:
        """Tell whoever follows the sync (a wait, a part not listed); logged too."""
        log.info("%s: %s", self.host, message)
        if self._note is not None:
            await self._note(message)


def _message(detail: str) -> str:
    """GitHub's error message from an error body (`{"message": …}`), else ''."""
    try:
        data = json.loads(detail)
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) else ""

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

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from yarl import URL

from knowledge.sources.connectors.api_client import ApiClient, Json, Params
from knowledge.sources.connectors.base import (
    ApiOptions,
    BadCredentials,
    ConnectorError,
    ConnectorUnavailable,
    NoAccess,
)
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.github_app import AppTokens
from knowledge.sources.connectors.github_repos import NotFound
from knowledge.sources.fetch import FetchSession
from knowledge.sources.robots import retry_after
from knowledge.sources.web import HttpStatus, Page

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
class RateLimits:
    """When GitHub's answers are tried again (the `Backoff` of one request to `resource`).

    A 403 or 429 that is a rate limit waits as GitHub asks: `Retry-After`, else until the
    resource's window resets, else (a secondary limit) a minute, doubling; 500, 502, 503 and
    504 wait 1, 2, 4 … s. Anything else, or a wait past `max_wait`, gives up."""

    retries: int
    max_wait: float
    until_reset: Callable[[], float | None]

    def wait(self, exc: BaseException | None, attempt: int) -> float | None:
        if not isinstance(exc, HttpStatus) or attempt > self.retries:
            return None
        wait: float | None = None
        if exc.status in (403, 429):
            wait = retry_after(exc.retry_after)
            if wait is None:
                wait = self.until_reset()
            if wait is None and (exc.status == 429 or _LIMITED.search(exc.detail)):
                wait = SECONDARY_WAIT * 2.0 ** (attempt - 1)
        elif exc.status in RETRIED:
            wait = 2.0 ** (attempt - 1)
        return wait if wait is not None and wait <= self.max_wait else None


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


class GitHubApi(ApiClient):
    def __init__(
        self,
        session: FetchSession,
        base_url: str,
        credentials: Credentials,
        options: ApiOptions,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(
            session,
            "GitHub",
            base_url,
            sleep=options.sleep,
            note=options.note,
            hint=" (GitHub Enterprise Server: https://HOST/api/v3)",
        )
        self.graphql_url = graphql_url(self.base_url)
        self._credentials = credentials
        self.app = AppTokens(credentials, self._exchange, clock) if credentials.is_app else None
        self._retries = options.retries
        self._max_wait = max(options.max_wait, LIMIT_WAIT)
        self._clock = clock
        self._limits: dict[str, tuple[int, float]] = {}
        """Per resource: requests remaining, and when the window resets (epoch seconds)."""

    # -- what the connector calls ----------------------------------------------------------

    async def get(self, path: str, params: Params | None = None, *, etag: str | None = None) -> Response:
        """A GET of the REST API; with `etag`, conditional (`not_modified` on a 304)."""
        headers = {"If-None-Match": etag} if etag else {}
        page = await self._send(self.url(path, params), None, headers, "core")
        following = next_link(page.headers.get("Link"))
        if following is not None and not self.allowed(following):
            raise ConnectorError(
                f"GitHub pointed the next page of results to another site ({URL(following).host})"
            )
        found_etag = page.headers.get("ETag") or etag
        if page.status == 304:
            return Response(None, found_etag, following, not_modified=True)
        return Response(self.decoded(page), found_etag, following)

    async def get_json(self, path: str, params: Params | None = None) -> Any:
        return (await self.get(path, params)).data

    async def graphql(self, query: str, variables: Mapping[str, object]) -> Json:
        """A GraphQL query's `data`; its errors as `ConnectorError`s (NOT_FOUND: `NotFound`)."""
        body = json.dumps({"query": query, "variables": dict(variables)}).encode()
        for attempt in range(self._retries + 1):
            page = await self._send(self.graphql_url, body, {"Content-Type": "application/json"}, "graphql")
            answer = self.decoded(page)
            errors = answer.get("errors") if isinstance(answer, dict) else None
            if not errors:
                data = answer.get("data") if isinstance(answer, dict) else None
                return data if isinstance(data, dict) else {}
            kinds = {str(e.get("type") or "") for e in errors if isinstance(e, dict)}
            if "RATE_LIMITED" in kinds and attempt < self._retries:
                await self.pause(self._until_reset("graphql") or SECONDARY_WAIT, "GraphQL rate limit")
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
        return self.decoded(page)

    # -- requests ----------------------------------------------------------------------------

    async def _exchange(self, app_jwt: str) -> tuple[str, str]:
        """The installation token for this JWT, and its expiry."""
        path = f"/app/installations/{self._credentials.installation_id}/access_tokens"
        page = await self._send(self.url(path), b"", {"Authorization": f"Bearer {app_jwt}"}, "core")
        data = self.decoded(page)
        token = data.get("token") if isinstance(data, dict) else None
        if not isinstance(token, str) or not token:
            raise ConnectorUnavailable(f"GitHub at {self.host} gave the app no installation token")
        return token, str(data.get("expires_at") or "")

    async def _send(self, url: str, body: bytes | None, headers: Mapping[str, str], resource: str) -> Page:
        """A request, tried again as `RateLimits` says; with a GitHub App, a refused
        installation token (revoked, or expired early) is minted again, once."""
        self.guard(url)
        policy = RateLimits(self._retries, self._max_wait, lambda: self._until_reset(resource))
        for renewed in (False, True):
            try:
                page = await self.retried(lambda: self._attempt(url, body, headers, resource), policy)
            except HttpStatus as exc:
                if (
                    exc.status == 401
                    and self.app is not None
                    and "Authorization" not in headers
                    and not renewed
                ):
                    self.app.forget()
                    continue
                raise self._translated(exc) from exc
            return self.unredirected(page)
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def _attempt(self, url: str, body: bytes | None, headers: Mapping[str, str], resource: str) -> Page:
        await self._respect(resource)
        sent = {"Accept": MEDIA_TYPE, "X-GitHub-Api-Version": API_VERSION, **headers}
        if "Authorization" not in sent:
            sent["Authorization"] = await self._authorization()
        try:
            page = await self.request(url, sent, body)
        except HttpStatus as exc:
            self._observe(exc.headers)
            raise
        self._observe(page.headers)
        return page

    async def _authorization(self) -> str:
        if self.app is not None:
            return await self.app.authorization()
        return self._credentials.authorization()

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
        await self.pause(wait, "GitHub's rate limit is used up")
        self._limits.pop(resource, None)

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


def _message(detail: str) -> str:
    """GitHub's error message from an error body (`{"message": …}`), else ''."""
    try:
        data = json.loads(detail)
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) else ""

"""Google's REST APIs as the Drive connector calls them (Drive v3, Sheets v4, Admin SDK
Directory v1), over Lore's address-checked fetcher: bearer tokens from `google_auth.py`,
`nextPageToken` paging, quota errors waited out, errors translated.

- **Where**: Drive at `https://www.googleapis.com/drive/v3` (or the address a connection
  names: a fake in tests), Sheets at `https://sheets.googleapis.com/v4`, Directory at
  `https://admin.googleapis.com/admin/directory/v1`; with another Drive address, Sheets and
  Directory are on its origin (`/v4`, `/admin/directory/v1`). Tokens go to those origins
  only, checked before every request; a redirect elsewhere is refused.
- **Quotas**: a 403 whose reason is `userRateLimitExceeded` or `rateLimitExceeded`, a 429,
  and 500/502/503/504 are tried again with exponential backoff (1, 2, 4 … s, or what
  `Retry-After` asks; `knowledge.sources.retry`); any other 403 is `NoAccess`, with Google's
  reason (`insufficientFilePermissions`, an API not enabled in the Cloud project).
- **Tokens**: a 401 mints a new token once and tries again (revoked, or expired early).

Why not google-api-python-client: it is synchronous and owns its HTTP client (httplib2), so
the address checks of `knowledge.sources.fetch` would not apply, and it is large.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from yarl import URL

from knowledge.sources.connectors.api_client import ApiClient, Params, Sleep
from knowledge.sources.connectors.base import (
    BadCredentials,
    ConnectorError,
    ConnectorUnavailable,
    NoAccess,
)
from knowledge.sources.connectors.drive_files import NotFound
from knowledge.sources.connectors.google_auth import GoogleTokens
from knowledge.sources.connectors.paging import MAX_PAGES, paged
from knowledge.sources.fetch import FetchSession
from knowledge.sources.retry import RetryPolicy
from knowledge.sources.web import HttpStatus, Page

Json = dict[str, Any]

DRIVE_URL = "https://www.googleapis.com/drive/v3"
SHEETS_URL = "https://sheets.googleapis.com/v4"
DIRECTORY_URL = "https://admin.googleapis.com/admin/directory/v1"
RATE_LIMITS = frozenset({"userRateLimitExceeded", "rateLimitExceeded"})
RETRIED = frozenset({403, 429, 500, 502, 503, 504})


def reasons(detail: str) -> list[str]:
    """The `reason`s of a Google error body (`{"error": {"errors": [{"reason": …}]}}`)."""
    try:
        data = json.loads(detail)
    except ValueError:
        return []
    error = data.get("error") if isinstance(data, dict) else None
    found = [e.get("reason") for e in (error or {}).get("errors") or [] if isinstance(e, dict)]
    status = (error or {}).get("status") if isinstance(error, dict) else None
    return [str(r) for r in found if r] + ([str(status)] if status else [])


def message(detail: str) -> str:
    """Google's error message, else ''."""
    try:
        data = json.loads(detail)
    except ValueError:
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    said = error.get("message") if isinstance(error, dict) else None
    return " ".join(str(said).split())[:200] if said else ""


@dataclass(frozen=True)
class QuotaPolicy(RetryPolicy):
    """The retry policy with Google's quota errors: a 403 is tried again only when its reason
    is a rate limit."""

    def wait(self, exc: BaseException | None, attempt: int) -> float | None:
        if isinstance(exc, HttpStatus) and exc.status == 403 and not RATE_LIMITS & set(reasons(exc.detail)):
            return None
        return super().wait(exc, attempt)


def roots(drive_url: str) -> tuple[str, str]:
    """The Sheets and Directory roots that go with a Drive root."""
    if drive_url == DRIVE_URL:
        return SHEETS_URL, DIRECTORY_URL
    origin = str(URL(drive_url).origin())
    return origin + "/v4", origin + "/admin/directory/v1"


class DriveApi(ApiClient):
    def __init__(
        self,
        session: FetchSession,
        base_url: str,
        tokens: GoogleTokens,
        directory_tokens: GoogleTokens,
        *,
        retries: int = 3,
        max_wait: float = 60.0,
        sleep: Sleep = asyncio.sleep,
        note: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        sheets_url, directory_url = roots(base_url.rstrip("/"))
        super().__init__(
            session,
            "Google",
            base_url,
            also=(sheets_url, directory_url),
            keeps="its tokens never go",
            sleep=sleep,
            note=note,
        )
        self.sheets_url, self.directory_url = sheets_url, directory_url
        self._tokens = tokens
        self._directory_tokens = directory_tokens
        self._policy = QuotaPolicy(RETRIED, retries, max_wait)

    async def get_json(self, path: str, params: Params | None = None, *, directory: bool = False) -> Json:
        return self.json_object(await self.get(self.url(path, params), directory=directory))

    async def pages(self, path: str, params: Params, *, directory: bool = False) -> AsyncIterator[Json]:
        """Every page of a listing, following `nextPageToken`."""

        async def page(token: str | None) -> Json:
            return await self.get_json(
                path, {**params, **({"pageToken": token} if token else {})}, directory=directory
            )

        def following(data: Json) -> str | None:
            return str(data.get("nextPageToken") or "") or None

        async for data in paged(
            None, page, following, too_long=f"a listing at {self.host} ran past {MAX_PAGES} pages"
        ):
            yield data

    async def get(self, url: str, *, directory: bool = False, max_bytes: int | None = None) -> Page:
        """A signed GET, tried again as the quota policy says; a refused token is renewed once."""
        self.guard(url)  # before any request: the token never leaves Google's origins
        tokens = self._directory_tokens if directory else self._tokens
        for renewed in (False, True):
            try:
                page = await self.retried(lambda: self._send(url, tokens), self._policy)
            except HttpStatus as exc:
                if exc.status == 401 and not renewed:
                    tokens.forget()
                    continue
                raise self._translated(exc, directory) from exc
            if max_bytes is not None and len(page.body) > max_bytes:
                raise ConnectorError(f"too large: over {max_bytes // (1024 * 1024)} MB")
            return page
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def _send(self, url: str, tokens: GoogleTokens) -> Page:
        headers = {"Authorization": await tokens.authorization(), "Accept": "application/json, */*"}
        return await self.request(url, headers)

    async def _waiting(self, exc: HttpStatus, wait: float) -> None:
        why = ", ".join(reasons(exc.detail)) or str(exc.status)
        await self.say(f"Google answered {exc.status} ({why}); trying again in {wait:g} s")

    def _translated(self, exc: HttpStatus, directory: bool) -> ConnectorError:
        said = message(exc.detail)
        why = f" (“{said}”)" if said else ""
        found = reasons(exc.detail)
        if exc.status == 401:
            return BadCredentials(f"Google refused the token (401){why}; connect Google Drive again")
        if exc.status == 403 and RATE_LIMITS & set(found):
            return ConnectorUnavailable(f"Google kept rate-limiting Lore (403{why}); the next sync goes on")
        if exc.status == 403 and directory:
            return NoAccess(
                f"Google's Directory refused Lore{why}: the account it acts as must be allowed to read "
                "groups, and the service account's client id must be given the directory scopes"
            )
        if exc.status == 403:
            return NoAccess(f"Google answered 403{why}: the account may not read this")
        if exc.status == 404:
            return NotFound(f"Google has nothing there for this account (404){why}")
        if exc.status == 429:
            return ConnectorUnavailable("Google kept asking Lore to slow down (429); the next sync goes on")
        return ConnectorUnavailable(f"Google at {self.host} answered {exc.status}{why}; try again later")

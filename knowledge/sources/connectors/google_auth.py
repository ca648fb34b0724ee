"""Access tokens for Google's APIs, minted by Google's own library (google-auth): a service
account's JWT-bearer grant acting as a Workspace user (domain-wide delegation), or the
refresh-token grant of one user's OAuth client. google-auth posts to the key's `token_uri`.

google-auth is synchronous, so a refresh runs in a worker thread; its HTTP request is sent
back to the event loop, through Lore's address-checked session (`BridgedRequest`), so the
token endpoint meets the same address checks as every other request, and only when its
origin is Google's (or the API's own: a fake in tests). Nothing here logs a key or a token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import google.auth.exceptions
import google.auth.transport
from google.auth.credentials import Credentials as GoogleCredentials
from google.oauth2 import credentials as user_credentials
from google.oauth2 import service_account
from yarl import URL

from knowledge.sources.connectors.base import BadCredentials, ConnectorError, ConnectorUnavailable
from knowledge.sources.connectors.google_keys import GoogleKey
from knowledge.sources.fetch import FetchSession
from knowledge.sources.web import FetchError, HttpStatus

DRIVE_SCOPES = ("https://www.googleapis.com/auth/drive.readonly",)
"""Read-only: Lore never changes anything in Drive (files, exports, changes, permissions,
shared drives; the Sheets API reads spreadsheets under this scope too)."""
DIRECTORY_SCOPES = (
    "https://www.googleapis.com/auth/admin.directory.group.member.readonly",
    "https://www.googleapis.com/auth/admin.directory.user.readonly",
)
"""Read-only: who is in a group, and a domain's users (for files shared with the domain)."""
TOKEN_TIMEOUT = 30.0  # seconds for Google's token endpoint, as for any other request


class _Answer(google.auth.transport.Response):
    def __init__(self, status: int, headers: Mapping[str, str], data: bytes) -> None:
        self._status, self._headers, self._data = status, dict(headers), data

    @property
    def status(self) -> int:
        return self._status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._headers

    @property
    def data(self) -> bytes:
        return self._data


class BridgedRequest(google.auth.transport.Request):
    """google-auth's HTTP transport, called in a worker thread: the request runs on the event
    loop, through the address-checked session, and only to an allowed origin."""

    def __init__(
        self, session: FetchSession, loop: asyncio.AbstractEventLoop, allowed: Callable[[str], bool]
    ) -> None:
        self._session = session
        self._loop = loop
        self._allowed = allowed

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout: Any = None,
        **kwargs: Any,
    ) -> _Answer:
        if not self._allowed(url):
            raise google.auth.exceptions.TransportError(  # type: ignore[no-untyped-call]
                f"the key's token endpoint ({URL(url).host}) is not Google's; Lore sends no key there"
            )
        data = body if isinstance(body, bytes) else str(body or "").encode()
        sent = asyncio.run_coroutine_threadsafe(self._send(url, method, data, headers or {}), self._loop)
        return sent.result(TOKEN_TIMEOUT * 2)

    async def _send(self, url: str, method: str, body: bytes, headers: Mapping[str, str]) -> _Answer:
        try:
            if method.upper() == "POST":
                page = await self._session.post(url, body, headers, timeout=TOKEN_TIMEOUT)
            else:
                page = await self._session.get(url, headers, timeout=TOKEN_TIMEOUT, within=self._allowed)
        except HttpStatus as exc:  # google-auth reads the error (invalid_grant …) from the body
            return _Answer(exc.status, exc.headers, exc.detail.encode())
        except FetchError as exc:
            raise google.auth.exceptions.TransportError(str(exc)) from exc  # type: ignore[no-untyped-call]
        return _Answer(page.status, page.headers, page.body)


def credentials_for(key: GoogleKey, scopes: Sequence[str]) -> GoogleCredentials:
    """google-auth's credentials for the key (a service account acting as its subject, with
    `scopes`; an OAuth user with the scopes it was granted); BadCredentials if unusable."""
    try:
        if key.is_service_account:
            return service_account.Credentials.from_service_account_info(  # type: ignore[no-untyped-call,no-any-return]
                dict(key.info), scopes=list(scopes), subject=key.subject
            )
        # Built by hand: `from_authorized_user_info` sends every refresh to Google's endpoint,
        # whatever the key's token_uri says (a proxy's, or a fake's in tests).
        return user_credentials.Credentials(  # type: ignore[no-untyped-call]
            None,
            refresh_token=key.info["refresh_token"],
            token_uri=key.token_uri,
            client_id=key.info["client_id"],
            client_secret=key.info["client_secret"],
        )
    except (ValueError, TypeError, google.auth.exceptions.GoogleAuthError) as exc:
        raise BadCredentials(
            "Google can't use these credentials: give the service account's JSON key as downloaded, "
            "or the OAuth client's id, secret and refresh token"
        ) from exc


class GoogleTokens:
    """Bearer tokens for one set of scopes, refreshed when they expire (or when an API
    refused one), one refresh at a time, off the event loop."""

    def __init__(
        self,
        key: GoogleKey,
        scopes: Sequence[str],
        session: FetchSession,
        allowed: Callable[[str], bool],
        *,
        what: str = "Google Drive",
    ) -> None:
        self._key = key
        self._credentials = credentials_for(key, scopes)
        self._session = session
        self._allowed = allowed
        self._lock = asyncio.Lock()
        self._what = what
        self.refreshes = 0
        """Tokens minted so far."""

    async def authorization(self) -> str:
        """`Bearer <access token>`, a fresh one when none is valid."""
        async with self._lock:
            if not self._credentials.valid:
                await self._refresh()
            return f"Bearer {self._credentials.token}"

    def forget(self) -> None:
        """An API refused the token (revoked, or the clock was wrong): mint another next time."""
        self._credentials.token = None

    async def _refresh(self) -> None:
        request = BridgedRequest(self._session, asyncio.get_running_loop(), self._allowed)
        try:
            await asyncio.to_thread(self._credentials.refresh, request)
        except google.auth.exceptions.RefreshError as exc:
            raise BadCredentials(self._refused(exc)) from exc
        except google.auth.exceptions.TransportError as exc:
            raise ConnectorUnavailable(f"I couldn't get a token from Google: {exc}") from exc
        except google.auth.exceptions.GoogleAuthError as exc:
            raise ConnectorError(f"Google refused to give a token: {type(exc).__name__}") from exc
        self.refreshes += 1

    def _refused(self, exc: google.auth.exceptions.RefreshError) -> str:
        said = _oauth_error(exc)
        if self._key.is_service_account:
            return (
                f"Google refused the service account's token for {self._what}{said}: check that the key "
                f"is current, that domain-wide delegation allows its client id these scopes, and that "
                f"{self._key.subject or 'the user it acts as'} is a user of the Workspace"
            )
        return (
            f"Google refused the OAuth client's refresh token{said}: check the client id and secret, and "
            "make a new refresh token if the user revoked Lore's access"
        )


def _oauth_error(exc: google.auth.exceptions.RefreshError) -> str:
    """Google's error code and description (`invalid_grant: …`), never a token."""
    details = exc.args[1] if len(exc.args) > 1 else None
    if isinstance(details, Mapping):
        code = str(details.get("error") or "")
        description = str(details.get("error_description") or "")[:160]
        said = ": ".join(p for p in (code, description) if p)
        return f" (“{said}”)" if said else ""
    return ""

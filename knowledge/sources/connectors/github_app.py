"""Signing in as a GitHub App installation: the app's JWT, exchanged for installation tokens.

A GitHub App proves who it is with a JSON Web Token signed with its private key (RS256,
`iss` the app id, `iat` a minute in the past for clocks apart, `exp` at most ten minutes
ahead), sent as a bearer token to `POST /app/installations/{id}/access_tokens`; the answer
is an installation access token that lasts an hour (`expires_at`). `AppTokens` keeps the
token and fetches a new one before it expires, or at once when GitHub refuses it (401).

PyJWT signs (with cryptography underneath); nothing here logs a key or a token.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

import jwt

from knowledge.sources.connectors.base import BadCredentials
from knowledge.sources.connectors.credentials import Credentials

JWT_BACKDATE = 60
"""Seconds `iat` is set in the past: GitHub refuses a token issued in its future."""
JWT_LIFETIME = 540
"""Seconds a JWT lasts (GitHub's limit is 600)."""
REFRESH_BEFORE = 300
"""An installation token is replaced this many seconds before it expires."""
Exchange = Callable[[str], Awaitable[tuple[str, str]]]
"""Given a JWT, the installation token and its `expires_at` (the API client's POST)."""


def app_jwt(app_id: str, private_key: str, now: float) -> str:
    """The app's JWT; `BadCredentials` when the key cannot sign."""
    claims = {"iat": int(now) - JWT_BACKDATE, "exp": int(now) + JWT_LIFETIME, "iss": app_id}
    try:
        return jwt.encode(claims, private_key, algorithm="RS256")
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise BadCredentials(
            "the GitHub App's private key can't sign a token: give the whole .pem file GitHub "
            "generated for the app"
        ) from exc


def expiry(value: str) -> float:
    """`expires_at` (ISO 8601, UTC) as epoch seconds; an unreadable one lasts ten minutes."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return time.time() + 600


@dataclass
class AppTokens:
    """The installation token of a GitHub App's credentials, minted and renewed on demand."""

    credentials: Credentials = field(repr=False)
    exchange: Exchange = field(repr=False)
    clock: Callable[[], float] = time.time
    _token: str | None = field(default=None, repr=False)
    _expires: float = 0.0

    def jwt(self) -> str:
        assert self.credentials.app_id is not None
        return app_jwt(self.credentials.app_id, self.credentials.token, self.clock())

    async def authorization(self) -> str:
        """`Bearer <installation token>`, fetching a new token when none is fresh."""
        if self._token is None or self._expires - self.clock() < REFRESH_BEFORE:
            token, expires_at = await self.exchange(self.jwt())
            self._token, self._expires = token, expiry(expires_at)
        return f"Bearer {self._token}"

    def forget(self) -> None:
        """GitHub refused the token (revoked, or the clock was wrong): mint another next time."""
        self._token, self._expires = None, 0.0

    @property
    def expires(self) -> float:
        return self._expires

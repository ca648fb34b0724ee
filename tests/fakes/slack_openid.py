"""The fake Slack's Sign in with Slack (OpenID Connect): the authorize page,
`openid.connect.token` and `openid.connect.userInfo`, in Slack's shapes.

    slack.openid.will_sign_in("U0ADMIN", "T0001", name="Ada")     # who signs in next
    slack.openid.will_sign_in("U0ADMIN", "T0001", deny=True)      # … or refuses

`GET /openid/connect/authorize?response_type=code&client_id&scope&state&nonce&redirect_uri`
answers a 302 to the redirect URL with `code` and `state` (or `error=access_denied`); the
code is used once, within ten minutes, by `openid.connect.token` with the app's client
credentials and the same `redirect_uri`, which answers `access_token` (a user token),
`token_type: Bearer` and `id_token`, a JWT whose claims are Slack's (`iss`, `sub`, `aud`,
`exp`, `iat`, `auth_time`, `nonce`, `https://slack.com/team_id`, `https://slack.com/user_id`,
`name` …). Its signature is not a real one: Lore reads the token as received from the token
endpoint. `openid.connect.userInfo` with that access token answers the person's claims.
"""

from __future__ import annotations

import base64
import itertools
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from .slack_oauth import OAuthError, SlackInstalls, _basic

Json = dict[str, Any]
CODE_SECONDS = 600
TOKEN_SECONDS = 300
ISSUER = "https://slack.com"


@dataclass(frozen=True)
class Signer:
    """Who signs in on the authorize page next."""

    user: str
    team_id: str
    name: str = ""
    deny: bool = False


@dataclass
class Code:
    signer: Signer
    redirect_uri: str | None
    nonce: str | None
    issued: float = field(default_factory=time.time)
    used: bool = False


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class SlackOpenID:
    def __init__(self, installs: SlackInstalls, team_names: dict[str, str]) -> None:
        self._installs = installs
        self._names = team_names
        self._next: list[Signer] = []
        self._codes: dict[str, Code] = {}
        self.tokens: dict[str, Signer] = {}
        """User tokens granted, and whose they are."""
        self.authorize_requests: list[Json] = []
        self._serial = itertools.count(1)

    def will_sign_in(self, user: str, team_id: str, *, name: str = "", deny: bool = False) -> None:
        self._next.append(Signer(user, team_id, name or user, deny))

    async def authorize(self, request: web.Request) -> web.Response:
        query = dict(request.query)
        self.authorize_requests.append(query)
        if query.get("client_id") != self._installs.client_id:
            return web.Response(status=400, text="invalid_client_id")
        if (
            query.get("response_type") != "code"
            or "openid" not in query.get("scope", "").replace(",", " ").split()
        ):
            return web.Response(status=400, text="invalid_scope")
        target = query.get("redirect_uri") or self._installs.redirect_url
        if not target:
            return web.Response(status=400, text="no redirect URL")
        state = {"state": query["state"]} if query.get("state") else {}
        signer = self._next.pop(0) if self._next else None
        if signer is None or signer.deny:
            raise web.HTTPFound(f"{target}?{urlencode({'error': 'access_denied', **state})}")
        code = f"oidc-{next(self._serial)}-{secrets.token_hex(4)}"
        self._codes[code] = Code(signer, query.get("redirect_uri"), query.get("nonce"))
        raise web.HTTPFound(f"{target}?{urlencode({'code': code, **state})}")

    def token(self, params: Json, authorization: str) -> Json:
        client_id, secret = _basic(authorization) or (params.get("client_id"), params.get("client_secret"))
        if client_id != self._installs.client_id:
            raise OAuthError("invalid_client_id")
        if secret != self._installs.client_secret:
            raise OAuthError("bad_client_secret")
        code = self._codes.get(str(params.get("code") or ""))
        if code is None or code.used or time.time() - code.issued > CODE_SECONDS:
            raise OAuthError("invalid_code")
        if code.redirect_uri is not None and params.get("redirect_uri") != code.redirect_uri:
            raise OAuthError("bad_redirect_uri")
        code.used = True
        access = f"xoxp-oidc-{next(self._serial)}-{secrets.token_hex(6)}"
        self.tokens[access] = code.signer
        now = int(time.time())
        claims = {
            "iss": ISSUER, "sub": code.signer.user, "aud": self._installs.client_id, "exp": now + TOKEN_SECONDS,
            "iat": now, "auth_time": now, "at_hash": _b64(secrets.token_bytes(16)),
            **self._person(code.signer),
        }  # fmt: skip
        if code.nonce is not None:
            claims["nonce"] = code.nonce
        header = {"typ": "JWT", "alg": "RS256", "kid": "fake-key"}
        id_token = ".".join(
            [
                _b64(json.dumps(header).encode()),
                _b64(json.dumps(claims).encode()),
                _b64(secrets.token_bytes(64)),
            ]
        )
        return {"access_token": access, "token_type": "Bearer", "id_token": id_token}

    def user_info(self, token: str | None) -> Json:
        if not token:
            raise OAuthError("not_authed")
        signer = self.tokens.get(token)
        if signer is None:
            raise OAuthError("invalid_auth")
        return {"sub": signer.user, **self._person(signer)}

    def _person(self, signer: Signer) -> Json:
        team = signer.team_id
        return {
            "https://slack.com/user_id": signer.user, "https://slack.com/team_id": team,
            "email": f"{signer.user.lower()}@example.com", "email_verified": True,
            "name": signer.name, "given_name": signer.name, "family_name": "", "locale": "en-US",
            "https://slack.com/team_name": self._names.get(team, team), "https://slack.com/team_domain": team.lower(),
        }  # fmt: skip

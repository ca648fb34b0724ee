"""Sign in with Slack (OpenID Connect), for the admin console, as slack_sdk supports it: the
authorize URL (`OpenIDConnectAuthorizeUrlGenerator`), then `openid.connect.token` for the
code and `openid.connect.userInfo` for who it is; what the workspace says of them (admin,
guest, another organisation's) comes from `users.info` with Lore's own bot token there, so
only people of a workspace Lore is installed in get in.

The ID token comes straight from Slack's token endpoint over TLS, with the app's secret, so
its claims are checked (audience, issuer, expiry, the nonce this sign-in sent) without
verifying its signature, as OpenID Connect allows for tokens received that way.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from slack_sdk.errors import SlackApiError
from slack_sdk.oauth import OpenIDConnectAuthorizeUrlGenerator
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.settings import Settings
from bot.app.signin import Identity, SignInFailed

log = logging.getLogger(__name__)
AUTHORIZE_PATH = "/openid/connect/authorize"
SCOPES = ("openid", "profile")
ISSUER = "https://slack.com"
CLOCK_SKEW = 300
USER_ID = "https://slack.com/user_id"
TEAM_ID = "https://slack.com/team_id"
FAILED = "Slack could not confirm who you are; try signing in again"
NOT_INSTALLED = "Lore is not installed in your Slack workspace, so its console has nothing for you"

BotClient = Callable[[str], Awaitable[AsyncWebClient]]
"""A client with Lore's bot token in a workspace (`LookupError`: Lore is not installed there)."""


class SlackSignIn:
    def __init__(self, settings: Settings, bot_client: BotClient) -> None:
        assert settings.slack_client_id is not None and settings.slack_client_secret is not None
        self._client_id = settings.slack_client_id
        self._secret = settings.slack_client_secret.get_secret_value()
        self._api = AsyncWebClient(base_url=settings.slack_api_url)
        parts = urlsplit(settings.slack_api_url)
        self._authorize = f"{parts.scheme}://{parts.netloc}{AUTHORIZE_PATH}"
        self._issuers = {ISSUER, f"{parts.scheme}://{parts.netloc}"}
        self._bot_client = bot_client

    def authorize_url(self, *, state: str, nonce: str, redirect_uri: str) -> str:
        generator = OpenIDConnectAuthorizeUrlGenerator(
            client_id=self._client_id,
            redirect_uri=redirect_uri,
            scopes=list(SCOPES),
            authorization_url=self._authorize,
        )
        return str(generator.generate(state=state, nonce=nonce))

    async def identify(self, *, code: str, redirect_uri: str, nonce: str) -> Identity:
        try:
            token = await self._api.openid_connect_token(
                client_id=self._client_id, client_secret=self._secret, code=code, redirect_uri=redirect_uri
            )
            claims = self._claims(str(token.get("id_token") or ""), nonce)
            info = await self._api.openid_connect_userInfo(token=str(token.get("access_token") or ""))
        except SlackApiError as exc:
            log.info("sign in with Slack failed: %s", exc.response.get("error"))
            raise SignInFailed(FAILED) from None
        user, team = str(info.get(USER_ID) or ""), str(info.get(TEAM_ID) or "")
        if not user or user != claims.get(USER_ID) or team != claims.get(TEAM_ID):
            raise SignInFailed(FAILED)
        return await self._person(team, user, str(info.get("name") or ""))

    def _claims(self, id_token: str, nonce: str) -> Mapping[str, Any]:
        claims = _payload(id_token)
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        fresh = isinstance(claims.get("exp"), int | float) and claims["exp"] + CLOCK_SKEW > time.time()
        if (
            self._client_id not in audiences
            or claims.get("iss") not in self._issuers
            or not fresh
            or claims.get("nonce") != nonce
        ):
            log.info("sign in with Slack: an ID token failed its checks (audience, issuer, expiry or nonce)")
            raise SignInFailed(FAILED)
        return claims

    async def _person(self, team: str, user: str, name: str) -> Identity:
        try:
            client = await self._bot_client(team)
            found = (await client.users_info(user=user)).get("user") or {}
        except (LookupError, SlackApiError):
            raise SignInFailed(NOT_INSTALLED) from None
        home = str(found.get("team_id") or team)
        return Identity(
            tenant_id=team,
            user_external_id=user,
            name=str(found.get("real_name") or found.get("name") or name),
            is_admin=bool(found.get("is_admin") or found.get("is_owner")),
            is_guest=bool(found.get("is_restricted") or found.get("is_ultra_restricted")),
            home_team=home if home != team else "",
        )


def _payload(token: str) -> Mapping[str, Any]:
    """The claims of a JWT (its middle part), {} when it is not one."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        found = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError):
        return {}
    return found if isinstance(found, dict) else {}

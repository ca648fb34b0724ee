"""The fake Slack's app installs: Slack's OAuth v2 authorize page and `oauth.v2.access`, and
the tokens they grant, one workspace's or (Enterprise Grid) a whole organisation's.

    slack.installs.will_install("T0002", name="Second")                  # who approves next
    slack.installs.will_install("T0003", enterprise_id="E0001", org_wide=True)
    slack.installs.token_rotation = True                                  # xoxe.xoxb-… tokens that expire
    slack.installs.revoke(team_id="T0002")                                # uninstalled: its tokens stop working

Wire format as Slack's: `GET /oauth/v2/authorize?client_id&scope&state&redirect_uri` answers
a 302 to the redirect URL with `code` and `state` (or `error=access_denied`); the code is
used once, within ten minutes, by `oauth.v2.access`, whose client credentials come as HTTP
Basic (as slack_sdk sends them) or as parameters; a `redirect_uri` given to the authorize
page must be given again, the same. With token rotation the answer carries `refresh_token`
and `expires_in`, and `grant_type=refresh_token` exchanges a refresh token (once) for a new
pair. An org-wide install's answer has `team: null`, `enterprise` and `is_enterprise_install:
true`, and `auth.test` with its token names the organisation in `team_id`.
"""

from __future__ import annotations

import base64
import itertools
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

Json = dict[str, Any]
CODE_SECONDS = 600


class OAuthError(Exception):
    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


@dataclass(frozen=True)
class Grant:
    """What a token stands for: a workspace's bot, or an organisation's (org-wide)."""

    team_id: str | None
    enterprise_id: str | None
    bot_user_id: str
    bot_id: str
    org_wide: bool = False
    expires_at: float | None = None

    @property
    def owner(self) -> str:
        return str(self.enterprise_id if self.org_wide else self.team_id)


@dataclass(frozen=True)
class Approval:
    """Who approves the next install on the authorize page, and where."""

    team_id: str | None
    enterprise_id: str | None = None
    org_wide: bool = False
    user: str = "UINSTALLER"
    deny: bool = False


@dataclass
class Code:
    approval: Approval
    redirect_uri: str | None
    scope: str
    issued: float = field(default_factory=time.time)
    used: bool = False


class SlackInstalls:
    """Tokens the fake accepts, and the OAuth flow that grants more."""

    def __init__(
        self, bot_token: str, team_id: str, bot_user_id: str, bot_id: str, app_id: str = "A0LORE"
    ) -> None:
        self.client_id = "1111.2222"
        self.client_secret = "fake-client-secret"
        self.app_id = app_id
        self.redirect_url: str | None = None
        """The app's configured Redirect URL, used when the authorize request names none."""
        self.token_rotation = False
        self.token_seconds = 43_200
        self.names: dict[str, str] = {team_id: "Lore Test"}
        """Names of the workspaces and organisations the fake knows."""
        self.grants: dict[str, Grant] = {bot_token: Grant(team_id, None, bot_user_id, bot_id)}
        self.refresh_tokens: dict[str, Grant] = {}
        self.authorize_requests: list[Json] = []
        self._codes: dict[str, Code] = {}
        self._next: list[Approval] = []
        self._serial = itertools.count(1)

    # -- what tests script ------------------------------------------------------------

    def will_install(
        self,
        team_id: str | None,
        *,
        name: str = "",
        enterprise_id: str | None = None,
        org_wide: bool = False,
        user: str = "UINSTALLER",
        deny: bool = False,
    ) -> None:
        """The next visit of the authorize page approves an install into `team_id` (or,
        `org_wide`, into the organisation `enterprise_id`); `deny` refuses it instead."""
        owner = enterprise_id if org_wide else team_id
        if owner and name:
            self.names[owner] = name
        self._next.append(Approval(None if org_wide else team_id, enterprise_id, org_wide, user, deny))

    def revoke(self, *, team_id: str | None = None, enterprise_id: str | None = None) -> list[str]:
        """The app was uninstalled there: every token of that workspace (or organisation)
        stops working. The tokens revoked."""
        gone = [
            token
            for token, grant in self.grants.items()
            if (team_id is not None and grant.team_id == team_id and not grant.org_wide)
            or (enterprise_id is not None and grant.enterprise_id == enterprise_id and grant.org_wide)
        ]
        for token in gone:
            del self.grants[token]
        self.refresh_tokens = {
            key: grant for key, grant in self.refresh_tokens.items() if grant in self.grants.values()
        }
        return gone

    def tokens_of(self, owner: str) -> list[str]:
        """The live tokens of a workspace or organisation, oldest first."""
        return [token for token, grant in self.grants.items() if grant.owner == owner]

    # -- what the fake's API asks -----------------------------------------------------

    def grant(self, token: str | None) -> Grant:
        """The grant behind a token (`not_authed`, `invalid_auth`, `token_expired`)."""
        if not token:
            raise OAuthError("not_authed")
        found = self.grants.get(token)
        if found is None:
            raise OAuthError("invalid_auth")
        if found.expires_at is not None and found.expires_at < time.time():
            raise OAuthError("token_expired")
        return found

    def auth_test(self, grant: Grant, team_domain: str) -> Json:
        """auth.test's answer for a token (an organisation's names the organisation)."""
        team = grant.owner
        answer: Json = {
            "url": f"https://{team_domain}.slack.com/", "team": self.names.get(team, team), "user": "lore",
            "team_id": team, "user_id": grant.bot_user_id, "bot_id": grant.bot_id,
            "is_enterprise_install": grant.org_wide,
        }  # fmt: skip
        if grant.enterprise_id:
            answer["enterprise_id"] = grant.enterprise_id
        return answer

    async def authorize(self, request: web.Request) -> web.Response:
        """Slack's authorize page, approved (or denied) at once as scripted."""
        query = dict(request.query)
        self.authorize_requests.append(query)
        if query.get("client_id") != self.client_id:
            return web.Response(status=400, text="invalid_client_id")
        target = query.get("redirect_uri") or self.redirect_url
        if not target:
            return web.Response(status=400, text="no redirect URL")
        approval = self._next.pop(0) if self._next else Approval(next(iter(self.names)))
        state = {"state": query["state"]} if query.get("state") else {}
        if approval.deny:
            raise web.HTTPFound(f"{target}?{urlencode({'error': 'access_denied', **state})}")
        code = f"code-{next(self._serial)}-{int(time.time() * 1000)}"
        self._codes[code] = Code(approval, query.get("redirect_uri"), query.get("scope", ""))
        raise web.HTTPFound(f"{target}?{urlencode({'code': code, **state})}")

    def access(self, params: Json, authorization: str) -> Json:
        """oauth.v2.access: a code (or, with token rotation, a refresh token) for tokens."""
        client_id, secret = _basic(authorization) or (params.get("client_id"), params.get("client_secret"))
        if client_id != self.client_id:
            raise OAuthError("invalid_client_id")
        if secret != self.client_secret:
            raise OAuthError("bad_client_secret")
        grant_type = params.get("grant_type") or "authorization_code"
        if grant_type == "refresh_token":
            return self._refreshed(str(params.get("refresh_token") or ""))
        if grant_type != "authorization_code":
            raise OAuthError("invalid_grant_type")
        code = self._codes.get(str(params.get("code") or ""))
        if code is None or code.used or time.time() - code.issued > CODE_SECONDS:
            raise OAuthError("invalid_code")
        if code.redirect_uri is not None and params.get("redirect_uri") != code.redirect_uri:
            raise OAuthError("bad_redirect_uri")
        code.used = True
        approval = code.approval
        serial = next(self._serial)
        grant = Grant(
            approval.team_id,
            approval.enterprise_id,
            bot_user_id=f"UBOT{serial:04d}",
            bot_id=f"BBOT{serial:04d}",
            org_wide=approval.org_wide,
        )
        answer = self._issued(grant)
        answer["scope"] = code.scope
        answer["authed_user"] = {"id": approval.user}
        return answer

    # -- internals --------------------------------------------------------------------

    def _issued(self, grant: Grant) -> Json:
        serial = next(self._serial)
        owner = grant.owner
        if self.token_rotation:
            token = f"xoxe.xoxb-1-{owner}-{serial}"
            grant = Grant(
                grant.team_id, grant.enterprise_id, grant.bot_user_id, grant.bot_id, grant.org_wide,
                expires_at=time.time() + self.token_seconds,
            )  # fmt: skip
        else:
            token = f"xoxb-{owner}-{serial}"
        self.grants[token] = grant
        answer: Json = {
            "access_token": token, "token_type": "bot", "bot_user_id": grant.bot_user_id, "app_id": self.app_id,
            "team": None if grant.org_wide else {"id": grant.team_id, "name": self.names.get(str(grant.team_id), "")},
            "enterprise": (
                {"id": grant.enterprise_id, "name": self.names.get(grant.enterprise_id, "")}
                if grant.enterprise_id else None
            ),
            "is_enterprise_install": grant.org_wide,
        }  # fmt: skip
        if self.token_rotation:
            refresh = f"xoxe-1-{owner}-{serial}"
            self.refresh_tokens[refresh] = grant
            answer.update(refresh_token=refresh, expires_in=self.token_seconds)
        return answer

    def _refreshed(self, refresh_token: str) -> Json:
        grant = self.refresh_tokens.pop(refresh_token, None)
        if grant is None:
            raise OAuthError("invalid_refresh_token")
        answer = self._issued(grant)
        answer["scope"] = ""
        return answer


def _basic(header: str) -> tuple[str, str] | None:
    if not header.startswith("Basic "):
        return None
    try:
        user, _, password = base64.b64decode(header.removeprefix("Basic ")).decode().partition(":")
    except ValueError:
        return None
    return user, password

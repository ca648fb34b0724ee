"""The fake Slack's Sign in with Slack (OpenID Connect), as slack_sdk drives it: the
authorize URL slack_sdk generates, `openid.connect.token`, `openid.connect.userInfo`."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth import OpenIDConnectAuthorizeUrlGenerator
from slack_sdk.web.async_client import AsyncWebClient

from .slack_server import FakeSlack

REDIRECT = "https://lore.example.com/console/auth/slack"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(bot_token="xoxb-test", team_id="T0001", bot_user_id="UBOT") as server:
        yield server


async def sign_in(slack: FakeSlack, *, nonce: str = "n-1", state: str = "s-1") -> dict[str, str]:
    """The authorize page as a browser meets it; the redirect's query."""
    url = OpenIDConnectAuthorizeUrlGenerator(
        client_id=slack.installs.client_id,
        redirect_uri=REDIRECT,
        scopes=["openid", "profile"],
        authorization_url=f"{slack.base_url}/openid/connect/authorize",
    ).generate(state=state, nonce=nonce)
    async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as page:
        assert page.status == 302
        location = page.headers["Location"]
    assert location.startswith(REDIRECT)
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def claims(id_token: str) -> dict[str, object]:
    header, payload, signature = id_token.split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "==="))["alg"] == "RS256"
    assert signature
    found = json.loads(base64.urlsafe_b64decode(payload + "==="))
    assert isinstance(found, dict)
    return found


async def test_a_sign_in_gives_an_id_token_and_the_user_s_claims(slack: FakeSlack) -> None:
    slack.openid.will_sign_in("U0ADA", "T0001", name="Ada")
    back = await sign_in(slack, nonce="abc")
    assert back["state"] == "s-1"
    client = AsyncWebClient(base_url=slack.api_url)
    installs = slack.installs
    token = await client.openid_connect_token(
        client_id=installs.client_id,
        client_secret=installs.client_secret,
        code=back["code"],
        redirect_uri=REDIRECT,
    )
    assert token["token_type"] == "Bearer" and str(token["access_token"]).startswith("xoxp-")
    found = claims(str(token["id_token"]))
    assert found["iss"] == "https://slack.com" and found["aud"] == installs.client_id
    assert found["nonce"] == "abc" and found["sub"] == "U0ADA"
    assert found["https://slack.com/team_id"] == "T0001" and found["https://slack.com/user_id"] == "U0ADA"
    assert isinstance(found["exp"], int) and found["exp"] > found["iat"]  # type: ignore[operator]
    info = await client.openid_connect_userInfo(token=str(token["access_token"]))
    assert info["sub"] == "U0ADA" and info["name"] == "Ada"
    assert info["https://slack.com/team_id"] == "T0001" and info["https://slack.com/team_name"] == "Lore Test"


async def test_codes_are_used_once_with_the_app_s_credentials_and_redirect(slack: FakeSlack) -> None:
    client = AsyncWebClient(base_url=slack.api_url)
    installs = slack.installs
    slack.openid.will_sign_in("U0ADA", "T0001")
    code = (await sign_in(slack))["code"]
    for wrong, error in (
        ({"client_secret": "nope"}, "bad_client_secret"),
        ({"redirect_uri": "https://elsewhere.example/cb"}, "bad_redirect_uri"),
    ):
        arguments = {"client_id": installs.client_id, "client_secret": installs.client_secret, "code": code}
        arguments.update(redirect_uri=REDIRECT)
        arguments.update(wrong)
        with pytest.raises(SlackApiError) as refused:
            await client.openid_connect_token(**arguments)
        assert refused.value.response["error"] == error
    ok = await client.openid_connect_token(
        client_id=installs.client_id, client_secret=installs.client_secret, code=code, redirect_uri=REDIRECT
    )
    assert ok["ok"]
    with pytest.raises(SlackApiError) as again:
        await client.openid_connect_token(
            client_id=installs.client_id,
            client_secret=installs.client_secret,
            code=code,
            redirect_uri=REDIRECT,
        )
    assert again.value.response["error"] == "invalid_code"


async def test_user_info_needs_a_token_it_granted(slack: FakeSlack) -> None:
    client = AsyncWebClient(base_url=slack.api_url)
    with pytest.raises(SlackApiError) as refused:
        await client.openid_connect_userInfo(token="xoxp-made-up")
    assert refused.value.response["error"] == "invalid_auth"
    with pytest.raises(SlackApiError) as bot:  # a bot token is not a Sign in with Slack token
        await client.openid_connect_userInfo(token=slack.bot_token)
    assert bot.value.response["error"] == "invalid_auth"


async def test_a_refused_sign_in_redirects_with_an_error(slack: FakeSlack) -> None:
    slack.openid.will_sign_in("U0ADA", "T0001", deny=True)
    back = await sign_in(slack)
    assert back == {"error": "access_denied", "state": "s-1"}
